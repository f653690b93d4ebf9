// The service's time against the bridge's, as `turns` and `calls` print it (issue #53): under a
// hosted service's timing (`--latency`, the local service's local.latency) a caller waits for the
// service's own time whatever the bridge does; what the bridge adds on top is its share.
//
//   v2v_ms_p50, v2v_ms_p90   the bridge's voiceToVoiceMs (its end of the caller's speech → the
//                            reply's first audio handed to the transport), replies to caller speech
//   service_floor_ms         median asrMs + median llmTtftMs + median ttsFirstAudioMs of the same
//                            replies: the service's own time, as the bridge measured it
//   bridge_added_ms_p50      per reply: v2v − max(service_floor_ms, that turn's end-of-turn wait
//                            eouDelayMs); the median. Negative when the service answered inside the
//                            wait or faster than its median
//   chat_requests_per_turn   E1 POSTs answering a turn (streamed, the conversation ending with the
//                            caller's words or a tool's result), counted at the service, ÷ caller
//                            turns the agent answered. Left out and shown apart in service_time:
//                            the opening line when the model writes it (no greeting set; its
//                            request ends with the instructions) and the after-call analysis (not
//                            streamed)
//   unanswered_turns         caller turns that got no agent audio before the caller's next line or
//                            the call's end
// llmTtftMs is measured by the bridge from its own chat request: a bridge that asks twice shows a
// longer "first token", so the floor can carry the very cost the figures are meant to expose;
// `latency` (the profile) says what the service itself was set to spend.
import type { EndpointCount } from "../../src/service/request-tally.ts";
import { percentile, round } from "./measure.ts";

/** The bridge's metrics of one reply (src/records/call-record.ts TurnMetrics, the part read here). */
export interface TurnTimes {
  eouDelayMs?: number | undefined;
  asrMs?: number | undefined;
  llmTtftMs?: number | undefined;
  ttsFirstAudioMs?: number | undefined;
  voiceToVoiceMs?: number | undefined;
}

export interface ServiceTimeFacts {
  /** Replies to caller speech (voiceToVoiceMs set), with the bridge's metrics. */
  turns: readonly TurnTimes[];
  /** Streamed E1 POSTs the service handled over the same calls and the others; null: not counted. */
  chatRequests: ChatRequests | null;
  answeredTurns: number;
  /** Null when nobody could tell (SIP callers do not time their turns). */
  unansweredTurns: number | null;
  /** The caller turns unansweredTurns is counted over, when they are not all of them. */
  questions?: number;
  /** A turn's end-of-turn wait when it has no eouDelayMs of its own (a fixed wait), ms. */
  eouWaitMs?: number;
}

const median = (xs: number[]) => (xs.length ? percentile(xs, 50) : Number.NaN);
const nums = (xs: Array<number | undefined>) => xs.filter((v): v is number => v !== undefined);
const fig = (v: number, digits = 0) => (Number.isFinite(v) ? round(v, digits) : null);

export function serviceTimeFigures(f: ServiceTimeFacts) {
  const turns = f.turns.filter((t) => t.voiceToVoiceMs !== undefined);
  const v2v = nums(turns.map((t) => t.voiceToVoiceMs));
  const asr = median(nums(turns.map((t) => t.asrMs)));
  const ttft = median(nums(turns.map((t) => t.llmTtftMs)));
  const tts = median(nums(turns.map((t) => t.ttsFirstAudioMs)));
  const floor = asr + ttft + tts;
  const added = Number.isFinite(floor)
    ? turns.flatMap((t) => {
        const wait = t.eouDelayMs ?? f.eouWaitMs;
        return [t.voiceToVoiceMs! - Math.max(floor, wait ?? 0)];
      })
    : [];
  return {
    v2v_ms_p50: fig(median(v2v)),
    v2v_ms_p90: fig(v2v.length ? percentile(v2v, 90) : Number.NaN),
    service_floor_ms: fig(floor),
    bridge_added_ms_p50: fig(median(added)),
    chat_requests_per_turn:
      f.chatRequests === null || f.answeredTurns === 0
        ? null
        : round(f.chatRequests.answers / f.answeredTurns, 2),
    unanswered_turns: f.unansweredTurns,
    service_time: {
      asr_ms_p50: fig(asr),
      llm_ttft_ms_p50: fig(ttft),
      tts_first_audio_ms_p50: fig(tts),
      bridge_added_ms_p90: fig(added.length ? percentile(added, 90) : Number.NaN),
      replies: turns.length,
      answered_turns: f.answeredTurns,
      ...(f.questions !== undefined ? { questions: f.questions } : {}),
      chat_requests: f.chatRequests?.answers ?? null,
      chat_requests_opening: f.chatRequests?.openings ?? null,
      chat_requests_not_streamed: f.chatRequests?.notStreamed ?? null,
    },
  };
}

/** E1 POSTs the service handled, by what they were (src/service/request-tally.ts). */
export interface ChatRequests {
  /** Streamed, ending with a user or tool message: a turn's answer or a tool round. */
  answers: number;
  /** Streamed, ending otherwise: an opening line the model writes. */
  openings: number;
  notStreamed: number;
}

const ANSWERING = new Set(["user", "tool"]);

const E1 = "POST /v1/chat/completions";

/**
 * E1 POSTs an in-process local service handled since the last call (since this one, the first
 * time), from its request tally; null without a local service.
 */
export function chatRequestCounter(
  service: { requests(): Readonly<Record<string, EndpointCount>> } | undefined,
): () => ChatRequests | null {
  const count = () => service?.requests()[E1] ?? { requests: 0, streamed: 0, answers: 0 };
  let last = count();
  return () => {
    if (!service) return null;
    const now = count();
    const [requests, streamed, answers] = [
      now.requests - last.requests,
      now.streamed - last.streamed,
      now.answers - last.answers,
    ];
    last = now;
    return { answers, openings: streamed - answers, notStreamed: requests - streamed };
  };
}

/**
 * E1 POSTs in a local service's JSON log written at debug level (one "request" line each, with
 * its `stream` and `lastRole`: src/service/server.ts), timed within [from, to] (epoch ms).
 */
export function chatRequestsInLog(log: string, [from, to]: [number, number]): ChatRequests {
  const marker = `"endpoint":${JSON.stringify(E1)}`;
  const out: ChatRequests = { answers: 0, openings: 0, notStreamed: 0 };
  for (const line of log.split("\n")) {
    if (!line.includes(marker)) continue;
    let e: { msg?: unknown; time?: unknown; stream?: unknown; lastRole?: unknown };
    try {
      e = JSON.parse(line);
    } catch {
      continue; // not a JSON log line
    }
    if (e.msg !== "request" || typeof e.time !== "number" || e.time < from || e.time > to) continue;
    if (e.stream !== true) out.notStreamed++;
    else if (ANSWERING.has(String(e.lastRole))) out.answers++;
    else out.openings++;
  }
  return out;
}
