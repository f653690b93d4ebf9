// A phone call as Twilio would place it to the bridge, to the letter of the published
// protocol: the signed voice webhook, the TwiML's <Connect><Stream>, the signed WebSocket,
// connected/start, caller audio as real-time 20 ms µ-law media (silence included, as a live
// line sends), DTMF, and stop. The agent's audio plays on a virtual line in real time, with
// marks echoed as their audio finishes and `clear` honoured. Caller audio is a fixed
// timeline (`caller`) and/or reactive turns (`says`), each spoken once the agent has replied
// and then been silent for a moment, the way a caller waits.
import { randomBytes } from "node:crypto";
import twilio from "twilio";
import { WebSocket } from "ws";
import { MEDIA_FORMAT, parseAppMessage } from "../../bridges/twilio/protocol.ts";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { resample } from "../../codecs/resample.ts";
import { type Clock, systemClock, type TimerHandle } from "../../src/core/clock.ts";
import { PlayoutLine } from "./playout.ts";
import { Recording } from "./recording.ts";
import { readStreamTwiml } from "./twiml-read.ts";
import { type Utterance, UtteranceSegmenter } from "./utterances.ts";

const RATE = 8000;
const FRAME = 160;
const FRAME_MS = 20;

export interface SimAudio {
  samples: Int16Array;
  rate: number;
  /** Shown in reports (e.g. the file name). */
  label?: string;
}

export interface SimulateCallOptions {
  /** Base URL of the bridge, e.g. http://127.0.0.1:8080. */
  url: string;
  /** Twilio auth token to sign the webhook and the WebSocket upgrade with. */
  authToken?: string;
  /** Caller audio on a fixed timeline from the start of the stream. */
  caller?: SimAudio;
  /** Reactive caller turns, in order. */
  says?: SimAudio[];
  /** Digits pressed at given times (ms from the start of the stream). */
  dtmf?: Array<{ digit: string; atMs: number }>;
  /** Hard limit on the call's length (default 120 s). */
  maxSeconds?: number;
  /** Agent silence after it has spoken before the next `says` turn (default 700 ms). */
  replyGapMs?: number;
  /** Silence on both sides after which the caller goes on anyway (default 5000 ms). */
  noReplyMs?: number;
  /** Once the caller has nothing left to say: agent silence before hanging up (default 2000 ms). */
  hangUpAfterMs?: number;
  /** Level above which caller audio counts as speech for the timings (default -45 dBFS). */
  speechThresholdDbfs?: number;
  callSid?: string;
  accountSid?: string;
  from?: string;
  to?: string;
  /**
   * The call's own parameters: sent with the voice webhook's form fields and, as the operator's
   * TwiML <Parameter>s would carry them, in the start message's customParameters.
   */
  params?: Record<string, string>;
  /**
   * The TwiML the call runs, for a call placed through the REST API (`calls.create({twiml})`):
   * no voice webhook is asked, its <Connect><Stream> is followed when the callee answers.
   */
  twiml?: string;
  /** Aborted when the call is ended through the REST API (Twilio then stops the stream). */
  ended?: AbortSignal;
  /** Connect to this WebSocket URL instead of the TwiML's (still signing the TwiML's, as Twilio would). */
  mediaUrl?: string;
  /** Fetch GET {url}/calls/{callSid} after the call (default true). */
  fetchTranscript?: boolean;
  /** The bridge's token (BRIDGE_TOKEN or its data dir's bridge-token), sent to read the transcript. */
  bridgeToken?: string | undefined;
  clock?: Clock;
  onEvent?: (e: SimEvent) => void;
  /**
   * Keep per-frame records (default true). A long run (a soak) passes false: agentAudio,
   * callerAudio, mediaReceivedMs, marks and turns come back empty, and `onAgentMessage` hears
   * each agent frame and clear as it arrives instead.
   */
  keep?: boolean;
  /**
   * Each agent media message and clear, ms since the start of the stream (sub-ms precision): when
   * it arrived (`atMs`) and, apart, when this process read it (`readAtMs`; the same unless
   * `attachReader` reads the socket).
   */
  onAgentMessage?: (kind: "media" | "clear", atMs: number, readAtMs: number) => void;
  /**
   * Reads the bridge's messages in place of `ws`'s own reading (the benchmarks' kernel-stamped
   * reader): given the open WebSocket and the handler, it calls the handler with each message and
   * when it arrived, on the clock's timeline (ms), and ends the WebSocket when the bridge does.
   */
  attachReader?: (
    ws: WebSocket,
    onMessage: (data: Buffer, isBinary: boolean, arrivedAt: number) => void,
  ) => void;
}

export interface SimEvent {
  /** ms since the start of the stream. */
  atMs: number;
  kind:
    | "start"
    | "say"
    | "caller-speech"
    | "caller-silence"
    | "dtmf"
    | "agent-audio"
    | "clear"
    | "stop"
    | "closed"
    | "protocol-error";
  detail?: string;
}

export interface SimTurn {
  index: number;
  source: "wav" | "say";
  label?: string;
  /** Caller speech, ms since the start of the stream. */
  startMs: number;
  endMs: number;
  /** The caller started speaking while agent audio was playing. */
  bargeIn: boolean;
  /** Barge-in reaction: caller speech start → `clear` received. */
  clearMs: number | null;
  /** Voice-to-voice: end of the caller's utterance → first agent audio received. */
  responseMs: number | null;
}

export interface SimMark {
  name: string;
  receivedMs: number;
  echoedMs: number;
  /** Echoed because of a clear, its audio unplayed. */
  cleared: boolean;
}

export interface SimResult {
  callSid: string;
  streamSid: string;
  accountSid: string;
  streamUrl: string;
  parameters: Record<string, string>;
  durationMs: number;
  endedBy: "caller" | "bridge" | "max-seconds";
  rate: 8000;
  /** What the caller heard, on the call's timeline. */
  agentAudio: Int16Array;
  /** What the caller sent, on the same timeline. */
  callerAudio: Int16Array;
  mediaSent: number;
  mediaReceived: number;
  /** When each agent media message arrived (ms since the start of the stream), in order. */
  mediaReceivedMs: number[];
  marks: SimMark[];
  /** When each `clear` was received (ms since the start of the stream). */
  clears: number[];
  turns: SimTurn[];
  /** GET {url}/calls/{callSid} from the bridge, when it answered. */
  transcript?: unknown;
  transcriptError?: string;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** A CallSid as Twilio makes them ("CA" and 32 hex digits): for a caller that names its call up front. */
export const newCallSid = (): string => `CA${hex(16)}`;

function to8k(a: SimAudio): Int16Array {
  return a.rate === RATE ? a.samples : resample(a.samples, a.rate, RATE);
}

/** The bridge answered the voice webhook with <Reject/>: the call was refused before it was answered. */
export class CallRejectedError extends Error {
  override name = "CallRejectedError";
  constructor() {
    super("the bridge rejected the call (<Reject/>)");
  }
}

async function postWebhook(
  opts: SimulateCallOptions,
  params: Record<string, string>,
): Promise<{ streamUrl: string; parameters: Record<string, string> }> {
  const webhookUrl = `${opts.url.replace(/\/+$/, "")}/twilio/voice`;
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (opts.authToken)
    headers["x-twilio-signature"] = twilio.getExpectedTwilioSignature(opts.authToken, webhookUrl, params);
  const res = await fetch(webhookUrl, {
    method: "POST",
    headers,
    body: new URLSearchParams(params).toString(),
  });
  const body = await res.text();
  if (res.status !== 200)
    throw new Error(`voice webhook ${webhookUrl}: HTTP ${res.status} ${body.slice(0, 200)}`);
  if (/<Reject\b/.test(body)) throw new CallRejectedError();
  const stream = readStreamTwiml(body);
  if (!stream) throw new Error(`voice webhook answered without <Connect><Stream>: ${body.slice(0, 300)}`);
  return { streamUrl: stream.url, parameters: stream.parameters };
}

function openSocket(url: string, signedUrl: string, authToken: string | undefined): Promise<WebSocket> {
  const headers: Record<string, string> = {};
  if (authToken) headers["x-twilio-signature"] = twilio.getExpectedTwilioSignature(authToken, signedUrl, {});
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => {
      reject(new Error(`media stream ${url}: HTTP ${res.statusCode}`));
      res.resume();
    });
    ws.once("error", (err) => reject(new Error(`media stream ${url}: ${err.message}`)));
  });
}

async function fetchTranscript(
  base: string,
  callSid: string,
  clock: Clock,
  bridgeToken: string | undefined,
): Promise<{ transcript?: unknown; error?: string }> {
  const url = `${base.replace(/\/+$/, "")}/calls/${encodeURIComponent(callSid)}`;
  // The bridge files the call once it has seen the stream end: allow it a moment.
  for (let attempt = 0; ; attempt++) {
    try {
      const headers: Record<string, string> = { accept: "application/json" };
      if (bridgeToken) headers.authorization = `Bearer ${bridgeToken}`;
      const res = await fetch(url, { headers });
      if (res.ok) return { transcript: await res.json() };
      if (res.status !== 404 || attempt >= 5) return { error: `GET ${url}: HTTP ${res.status}` };
    } catch (err) {
      return { error: `GET ${url}: ${(err as Error).message}` };
    }
    await new Promise<void>((r) => clock.setTimeout(r, 200));
  }
}

export async function simulateCall(opts: SimulateCallOptions): Promise<SimResult> {
  const clock = opts.clock ?? systemClock;
  const callSid = opts.callSid ?? newCallSid();
  const accountSid = opts.accountSid ?? `AC${hex(16)}`;
  const streamSid = `MZ${hex(16)}`;
  const params = {
    AccountSid: accountSid,
    ApiVersion: "2010-04-01",
    CallSid: callSid,
    CallStatus: "ringing",
    Direction: "inbound",
    From: opts.from ?? "+15005550006",
    To: opts.to ?? "+15005550001",
    ...opts.params,
  };
  const placed = opts.twiml !== undefined ? readStreamTwiml(opts.twiml) : undefined;
  if (opts.twiml !== undefined && !placed)
    throw new Error(`the call's TwiML has no <Connect><Stream>: ${opts.twiml.slice(0, 300)}`);
  const { streamUrl, parameters } = placed
    ? { streamUrl: placed.url, parameters: placed.parameters }
    : await postWebhook(opts, params);
  const ws = await openSocket(opts.mediaUrl ?? streamUrl, streamUrl, opts.authToken);

  const caller = opts.caller ? to8k(opts.caller) : new Int16Array(0);
  const says = (opts.says ?? []).map((s) => ({ pcm: to8k(s), label: s.label }));
  const dtmf = [...(opts.dtmf ?? [])].sort((a, b) => a.atMs - b.atMs);
  const frames = (ms: number) => Math.max(1, Math.round(ms / FRAME_MS));
  const maxFrames = frames((opts.maxSeconds ?? 120) * 1000);
  const replyGap = frames(opts.replyGapMs ?? 700);
  const noReply = frames(opts.noReplyMs ?? 5000);
  const hangUpAfter = frames(opts.hangUpAfterMs ?? 2000);

  let seq = 0;
  const send = (msg: Record<string, unknown>) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  };
  const sequenced = (event: string, body: Record<string, unknown>) =>
    send({ event, sequenceNumber: String(++seq), ...body, streamSid });

  const keep = opts.keep !== false;
  const playout = new PlayoutLine();
  const agentRec = new Recording(keep ? undefined : 0);
  const callerRec = new Recording(keep ? undefined : 0);
  const segmenter = new UtteranceSegmenter(
    opts.speechThresholdDbfs !== undefined ? { thresholdDbfs: opts.speechThresholdDbfs } : {},
  );
  const marks: SimMark[] = [];
  const pendingMarks = new Map<string, number>();
  const clears: number[] = [];
  const receipts: number[] = [];
  // Whether agent audio played in frame k. Kept whole for the turns' report; without `keep`, the
  // last 10 s only (what the hang-up and barge-in checks look back over).
  const agentAudible: boolean[] = [];
  const AUDIBLE_RING = 512;
  const setAudible = (k: number, v: boolean) => {
    agentAudible[keep ? k : k % AUDIBLE_RING] = v;
  };
  const audibleAt = (k: number) => agentAudible[keep ? k : k % AUDIBLE_RING] === true;
  const sayspans: Array<{ start: number; end: number; label: string | undefined }> = [];
  const utterances: Array<Utterance & { bargeIn: boolean }> = [];
  let mediaSent = 0;
  let mediaReceived = 0;
  let lastReceiptMs = Number.NEGATIVE_INFINITY;
  let t0 = 0;
  const nowMs = () => clock.now() - t0;
  const emit = (kind: SimEvent["kind"], detail?: string) =>
    opts.onEvent?.({ atMs: Math.round(nowMs()), kind, ...(detail !== undefined ? { detail } : {}) });

  const echo = (names: string[], cleared: boolean) => {
    for (const name of names) {
      sequenced("mark", { mark: { name } });
      if (keep)
        marks.push({ name, receivedMs: pendingMarks.get(name) ?? nowMs(), echoedMs: nowMs(), cleared });
      pendingMarks.delete(name);
    }
  };

  const onMessage = (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean, arrivedAt?: number) => {
    if (isBinary) return;
    const parsed = parseAppMessage(data.toString());
    if (!parsed.ok) {
      emit("protocol-error", parsed.reason);
      return;
    }
    const msg = parsed.message;
    if (msg.streamSid !== streamSid) return;
    const read = nowMs();
    const t = arrivedAt !== undefined ? arrivedAt - t0 : read;
    if (msg.event === "media") {
      const bytes = Buffer.from(msg.media.payload, "base64");
      playout.audio(mulawDecode(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
      if (t - lastReceiptMs > 200) emit("agent-audio");
      lastReceiptMs = t;
      if (keep) receipts.push(t);
      mediaReceived++;
      opts.onAgentMessage?.("media", t, read);
    } else if (msg.event === "mark") {
      pendingMarks.set(msg.mark.name, read);
      echo(playout.mark(msg.mark.name), false);
    } else {
      clears.push(t);
      opts.onAgentMessage?.("clear", t, read);
      emit("clear");
      echo(playout.clear(), true);
    }
  };
  if (opts.attachReader) opts.attachReader(ws, onMessage);
  else ws.on("message", (data, isBinary) => onMessage(data, isBinary));

  // ---- the call's frame clock ----
  const callerFrame = new Int16Array(FRAME);
  const agentFrame = new Int16Array(FRAME);
  let k = 0;
  let timer: TimerHandle | undefined;
  let say: { pcm: Int16Array; pos: number; label: string | undefined; start: number } | null = null;
  let nextSay = 0;
  let nextDtmf = 0;
  let lastCallerActivity = -1;
  let lastAgentFrame = -1;
  let endedBy: SimResult["endedBy"] | null = null;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });

  const finishUtterance = (u: Utterance | null) => {
    if (!u) return;
    if (!keep) return;
    const last = utterances.at(-1);
    if (last && last.startFrame === u.startFrame) return;
    utterances.push({
      ...u,
      bargeIn: audibleAt(u.startFrame - 1) || audibleAt(u.startFrame),
    });
  };

  const step = () => {
    // Caller: the timeline plus any reactive turn being spoken, mixed.
    callerFrame.fill(0);
    const base = k * FRAME;
    if (base < caller.length) callerFrame.set(caller.subarray(base, Math.min(caller.length, base + FRAME)));
    if (say) {
      const s = say;
      const n = Math.min(FRAME, s.pcm.length - s.pos);
      for (let i = 0; i < n; i++) {
        const v = callerFrame[i]! + s.pcm[s.pos + i]!;
        callerFrame[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      }
      s.pos += n;
      if (s.pos >= s.pcm.length) {
        sayspans.push({ start: s.start, end: k + 1, label: s.label });
        say = null;
      }
    }
    if (keep) callerRec.append(callerFrame);
    sequenced("media", {
      media: {
        track: "inbound",
        chunk: String(k + 1),
        timestamp: String(k * FRAME_MS),
        payload: Buffer.from(mulawEncode(callerFrame)).toString("base64"),
      },
    });
    mediaSent++;
    const seg = segmenter.push(k, callerFrame);
    if (seg.started) emit("caller-speech");
    if (seg.ended) {
      emit("caller-silence");
      finishUtterance(seg.ended);
    }
    if (seg.speech) lastCallerActivity = k;

    while (nextDtmf < dtmf.length && dtmf[nextDtmf]!.atMs <= k * FRAME_MS) {
      const digit = dtmf[nextDtmf++]!.digit;
      sequenced("dtmf", { dtmf: { track: "inbound_track", digit } });
      lastCallerActivity = k;
      emit("dtmf", digit);
    }

    // Agent: 20 ms of the playout line.
    const played = playout.play(agentFrame);
    if (keep) agentRec.append(agentFrame);
    setAudible(k, played.samples > 0);
    if (played.samples > 0) lastAgentFrame = k;
    echo(played.marks, false);

    // The next reactive turn: after the agent replied and fell silent, or after a long silence.
    const agentQuiet = playout.buffered === 0 && !audibleAt(k);
    if (!say && nextSay < says.length && agentQuiet) {
      const replied = lastAgentFrame > lastCallerActivity && k - lastAgentFrame >= replyGap;
      const nobody = k - Math.max(lastCallerActivity, lastAgentFrame, 0) >= noReply;
      if (replied || nobody) {
        const next = says[nextSay++]!;
        say = { pcm: next.pcm, pos: 0, label: next.label, start: k + 1 };
        emit("say", next.label ?? `turn ${nextSay}`);
      }
    }

    // Hang up once the caller has nothing left and the agent has had its say.
    const callerDone =
      base + FRAME >= caller.length &&
      nextSay >= says.length &&
      !say &&
      nextDtmf >= dtmf.length &&
      !segmenter.speaking;
    if (callerDone && agentQuiet) {
      const replied = lastAgentFrame > lastCallerActivity && k - lastAgentFrame >= hangUpAfter;
      const nobody = k - Math.max(lastCallerActivity, lastAgentFrame, 0) >= noReply;
      if (replied || nobody) return finish("caller");
    }
    if (k + 1 >= maxFrames) return finish("max-seconds");
  };

  const wake = () => {
    timer = undefined;
    const now = clock.now();
    while (endedBy === null && now >= t0 + k * FRAME_MS) {
      step();
      k++;
    }
    if (endedBy === null) timer = clock.setTimeout(wake, t0 + k * FRAME_MS - clock.now());
  };

  function finish(by: SimResult["endedBy"]): void {
    if (endedBy !== null) return;
    endedBy = by;
    clock.clearTimeout(timer);
    finishUtterance(segmenter.finish());
    if (by !== "bridge") {
      sequenced("stop", { stop: { accountSid, callSid } });
      emit("stop", by);
      ws.close(1000, "stop");
    }
    resolveDone();
  }

  const closed = new Promise<void>((resolve) => {
    ws.on("close", (code) => {
      emit("closed", String(code));
      finish("bridge");
      resolve();
    });
  });

  send({ event: "connected", protocol: "Call", version: "1.0.0" });
  sequenced("start", {
    start: {
      accountSid,
      streamSid,
      callSid,
      tracks: ["inbound"],
      customParameters: { ...opts.params, ...parameters },
      mediaFormat: { ...MEDIA_FORMAT },
    },
  });
  t0 = clock.now();
  emit("start", callSid);
  opts.ended?.addEventListener("abort", () => {
    if (endedBy !== null) return;
    sequenced("stop", { stop: { accountSid, callSid } });
    finish("bridge");
    ws.close(1000, "stop");
  });
  wake();

  await done;
  await Promise.race([closed, new Promise<void>((r) => clock.setTimeout(r, 2000))]);
  if (ws.readyState !== WebSocket.CLOSED) ws.terminate();

  const durationMs = k * FRAME_MS;
  const turns = utterances.map((u, index): SimTurn => {
    const startMs = u.startFrame * FRAME_MS;
    const endMs = u.endFrame * FRAME_MS;
    const span = sayspans.find((s) => s.start < u.endFrame && s.end > u.startFrame);
    const label = span ? span.label : opts.caller?.label;
    const nextStart = utterances[index + 1] ? utterances[index + 1]!.startFrame * FRAME_MS : Infinity;
    const clear = u.bargeIn ? clears.find((t) => t >= startMs && t <= endMs + 1000) : undefined;
    const agentStillTalking = agentAudible[u.endFrame] === true && agentAudible[u.endFrame - 1] === true;
    const reply = agentStillTalking ? undefined : receipts.find((t) => t >= endMs && t < nextStart);
    return {
      index,
      source: span ? "say" : "wav",
      ...(label !== undefined ? { label } : {}),
      startMs,
      endMs,
      bargeIn: u.bargeIn,
      clearMs: clear !== undefined ? Math.round(clear - startMs) : null,
      responseMs: reply !== undefined ? Math.round(reply - endMs) : null,
    };
  });

  const result: SimResult = {
    callSid,
    streamSid,
    accountSid,
    streamUrl,
    parameters,
    durationMs,
    endedBy: endedBy ?? "bridge",
    rate: RATE,
    agentAudio: agentRec.toArray(),
    callerAudio: callerRec.toArray(),
    mediaSent,
    mediaReceived,
    mediaReceivedMs: receipts,
    marks,
    clears,
    turns,
  };
  if (opts.fetchTranscript !== false) {
    const t = await fetchTranscript(opts.url, callSid, clock, opts.bridgeToken);
    if (t.transcript !== undefined) result.transcript = t.transcript;
    if (t.error) result.transcriptError = t.error;
  }
  return result;
}
