// A hosted service's timing, played where a hosted service spends it: E6's transcript after the
// upload's end, E1–E3's first chunk after the request, every E5 message on its way, E4's first
// byte. Each wait is a floor measured from its own start on the monotonic clock (the local engine's
// own time counts towards it, as a hosted service's does), never an addition to whatever came
// before, and it never lets anything out early: a timer that fires before its deadline is re-armed.
import { performance } from "node:perf_hooks";
import { type Random, seededRandom } from "../engines/image/prng.ts";
import { delayedSocket, type MessageSocket } from "./delayed-socket.ts";

export type { MessageSocket } from "./delayed-socket.ts";

/** The timing to play (the config's `local.latency`, structurally). */
export interface LatencyProfile {
  readonly name: "none" | "hosted" | "custom";
  readonly asrMs: number;
  readonly chatMs: number;
  readonly ttsMs: number;
  /** Each delay is drawn within ± this fraction of itself (0: exact). */
  readonly jitter: number;
  readonly seed: number;
}

export type LatencyStage = "asr" | "chat" | "tts";

export const NO_LATENCY: LatencyProfile = { name: "none", asrMs: 0, chatMs: 0, ttsMs: 0, jitter: 0, seed: 1 };

const MS_OF = { asr: "asrMs", chat: "chatMs", tts: "ttsMs" } as const;

/** `hosted: asr=400,chat=550,tts=250 ms` (with `, jitter ±25 % seed 7`), or `none`. */
export function describeLatency(p: LatencyProfile): string {
  if (p.asrMs + p.chatMs + p.ttsMs === 0) return "none";
  const jitter = p.jitter > 0 ? `, jitter ±${Math.round(p.jitter * 1000) / 10} % seed ${p.seed}` : "";
  return `${p.name}: asr=${p.asrMs},chat=${p.chatMs},tts=${p.ttsMs} ms${jitter}`;
}

export class Latency {
  readonly profile: LatencyProfile;
  /** One seeded sequence per stage, so one stage's traffic does not shift another's draws. */
  private readonly draws: Record<LatencyStage, Random>;

  constructor(profile: LatencyProfile = NO_LATENCY) {
    this.profile = profile;
    const draw = (stage: LatencyStage) => seededRandom("latency", profile.seed, stage);
    this.draws = { asr: draw("asr"), chat: draw("chat"), tts: draw("tts") };
  }

  /** Whether any stage waits. */
  get active(): boolean {
    return this.profile.asrMs + this.profile.chatMs + this.profile.ttsMs > 0;
  }

  /** One exchange's delay for `stage`, ms (a fresh draw when there is jitter). */
  delayMs(stage: LatencyStage): number {
    const base = this.profile[MS_OF[stage]];
    if (base <= 0) return 0;
    const { jitter } = this.profile;
    return jitter > 0 ? Math.max(0, base * (1 + jitter * (2 * this.draws[stage]() - 1))) : base;
  }

  /**
   * Resolves once `stage`'s delay has passed since `fromMs` (performance.now() time); undefined
   * when there is nothing to wait for.
   */
  after(stage: LatencyStage, fromMs: number): Promise<void> | undefined {
    const ms = this.delayMs(stage);
    return ms > 0 ? sleepUntil(fromMs + ms) : undefined;
  }

  /** `socket` with every message (and the close) sent `tts` ms late, in order. */
  delayTts<S extends MessageSocket>(socket: S): MessageSocket {
    return this.profile.ttsMs > 0 ? delayedSocket(socket, () => this.delayMs("tts")) : socket;
  }
}

/** Resolves at `deadline` (performance.now() time) or later; undefined when it has passed. */
export function sleepUntil(deadline: number): Promise<void> | undefined {
  if (performance.now() >= deadline) return undefined;
  return new Promise((resolve) => {
    // Node's timers count from the loop's cached time and may fire a little early: check, re-arm.
    const check = () => {
      const left = deadline - performance.now();
      if (left <= 0) resolve();
      else setTimeout(check, Math.ceil(left));
    };
    check();
  });
}
