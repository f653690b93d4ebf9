// A phone call as Twilio would place it to the bridge, to the letter of the published
// protocol: the signed voice webhook, the TwiML's <Connect><Stream>, the signed WebSocket, then
// the media stream (media-stream.ts): connected/start, caller audio as real-time 20 ms µ-law
// media (silence included, as a live line sends), DTMF, and stop. The agent's audio plays on a
// virtual line in real time, with marks echoed as their audio finishes and `clear` honoured.
// Caller audio is a fixed timeline (`caller`) and/or reactive turns (`says`), each spoken once the
// agent has replied and then been silent for a moment, the way a caller waits.
import { randomBytes } from "node:crypto";
import twilio from "twilio";
import { WebSocket } from "ws";
import { type Clock, systemClock } from "../../src/core/clock.ts";
import type { TimelineCue, TimelineHold } from "./caller-timeline.ts";
import { SimulatedStream } from "./media-stream.ts";
import { readStreamTwiml } from "./twiml-read.ts";

export interface SimAudio {
  samples: Int16Array;
  rate: number;
  /** Shown in reports (e.g. the file name). */
  label?: string;
}

/** A reactive turn on the keypad: these digits (0-9, *, #, A-D), pressed 100 ms apart as DTMF. */
export interface SimKeys {
  keys: string;
  /** Shown in reports. */
  label?: string;
}

export interface SimulateCallOptions {
  /** Base URL of the bridge, e.g. http://127.0.0.1:8080. */
  url: string;
  /** Twilio auth token to sign the webhook and the WebSocket upgrade with. */
  authToken?: string;
  /**
   * Caller audio on a fixed timeline from the start of the stream; with `cues`, it waits at each
   * for the agent, as a caller does who speaks some way into what the agent says (caller-timeline.ts).
   */
  caller?: SimAudio & { cues?: readonly TimelineCue[] };
  /** Reactive caller turns, in order: speech, or keys pressed. */
  says?: Array<SimAudio | SimKeys>;
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
  /**
   * Aborted when new TwiML through the REST API ends the stream (Twilio then stops it). With a
   * ConferenceSeat as its reason (a <Dial><Conference>: conference.ts) the call stays up in that
   * conference — its line going there, what it hears coming from there — until it leaves it (hung
   * up by the seat's holder, the conference ended, its own hang-up, or maxSeconds).
   */
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
    | "conference"
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
  /** `conference`: the conference the call was moved into ended (another left it, ending it). */
  endedBy: "caller" | "bridge" | "max-seconds" | "conference";
  rate: 8000;
  /** What the caller heard, on the call's timeline: the bridge, then the conference once in one. */
  agentAudio: Int16Array;
  /**
   * The conference new TwiML moved the call into: when (its stream stopped then), ms, and where on
   * the call's timeline (agentAudio's, frame k at k × 20 ms) the first frame it played is. The two
   * differ by up to a frame, more when the simulator's timer ran late and caught its frames up.
   */
  conference?: { name: string; atMs: number; fromMs: number };
  /** What the caller sent, on the same timeline. */
  callerAudio: Int16Array;
  /** Where the caller's timeline waited for the agent, and how long: its times on the stream are `onStream`'s. */
  holds: TimelineHold[];
  mediaSent: number;
  mediaReceived: number;
  /** When each agent media message arrived (ms since the start of the stream), in order. */
  mediaReceivedMs: number[];
  marks: SimMark[];
  /** When each `clear` was received (ms since the start of the stream). */
  clears: number[];
  turns: SimTurn[];
  /** Keys the agent pressed (send_dtmf), heard as DTMF tones in its audio: each key and the frame it was heard in, ms. */
  agentKeys: Array<{ digit: string; atMs: number }>;
  /** GET {url}/calls/{callSid} from the bridge, when it answered. */
  transcript?: unknown;
  transcriptError?: string;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** A CallSid as Twilio makes them ("CA" and 32 hex digits): for a caller that names its call up front. */
export const newCallSid = (): string => `CA${hex(16)}`;

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

/** How long after the stream's end the call's record may take to be filed, ms. */
const FILE_WAIT_MS = 10_000;

async function fetchTranscript(
  base: string,
  callSid: string,
  clock: Clock,
  bridgeToken: string | undefined,
): Promise<{ transcript?: unknown; error?: string }> {
  const url = `${base.replace(/\/+$/, "")}/calls/${encodeURIComponent(callSid)}`;
  // The bridge files the call once it has seen the stream end: allow it a moment, longer on a
  // loaded machine, where filing it waits its turn behind the other calls' work.
  const until = clock.now() + FILE_WAIT_MS;
  for (;;) {
    try {
      const headers: Record<string, string> = { accept: "application/json" };
      if (bridgeToken) headers.authorization = `Bearer ${bridgeToken}`;
      const res = await fetch(url, { headers });
      if (res.ok) return { transcript: await res.json() };
      if (res.status !== 404 || clock.now() >= until) return { error: `GET ${url}: HTTP ${res.status}` };
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

  const stream = new SimulatedStream(ws, opts, clock, { callSid, accountSid, streamSid });
  if (opts.attachReader) opts.attachReader(ws, stream.onMessage);
  else ws.on("message", (data, isBinary) => stream.onMessage(data, isBinary));
  await stream.run({ ...opts.params, ...parameters });

  const result: SimResult = {
    callSid,
    streamSid,
    accountSid,
    streamUrl,
    parameters,
    ...stream.outcome(),
  };
  if (opts.fetchTranscript !== false) {
    const t = await fetchTranscript(opts.url, callSid, clock, opts.bridgeToken);
    if (t.transcript !== undefined) result.transcript = t.transcript;
    if (t.error) result.transcriptError = t.error;
  }
  return result;
}
