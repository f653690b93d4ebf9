// The signals the recovery's requests run under, and what it cost, by the caller's signal. Each
// request gets its own signal (a hedge's loser is aborted alone), linked to the one the caller
// passed; per-call things looked up by the caller's signal (the request's trace headers, this
// turn's hedges and fallbacks) are found again through originOf().

/** What recovering the chat requests made under one signal took: the agent turn's figures. */
export interface ChatRecovery {
  /** Second requests started beside a late first one. */
  hedgedRequests: number;
  /** Requests sent to the agent's fallback. */
  fallbacks: number;
}

const origins = new WeakMap<AbortSignal, AbortSignal>();
const recoveries = new WeakMap<AbortSignal, ChatRecovery>();

/** A controller for one request: aborted with `parent`, or alone. */
export function requestController(parent: AbortSignal): AbortController {
  const c = new AbortController();
  origins.set(c.signal, originOf(parent));
  if (parent.aborted) c.abort(parent.reason);
  else {
    const onAbort = () => c.abort(parent.reason);
    parent.addEventListener("abort", onAbort, { once: true });
    c.signal.addEventListener("abort", () => parent.removeEventListener("abort", onAbort), { once: true });
  }
  return c;
}

/** The caller's signal a request's signal was made from (itself when it was not). */
export function originOf(signal: AbortSignal): AbortSignal {
  return origins.get(signal) ?? signal;
}

/** Counts one hedge or fallback against the caller's signal. */
export function noteRecovery(signal: AbortSignal, what: keyof ChatRecovery): void {
  const origin = originOf(signal);
  let r = recoveries.get(origin);
  if (!r) {
    r = { hedgedRequests: 0, fallbacks: 0 };
    recoveries.set(origin, r);
  }
  r[what]++;
}

/**
 * The hedges and fallbacks of the chat requests made under `signal` (an agent turn passes one
 * signal to all its chat requests), or undefined when none were needed.
 */
export function chatRecovery(signal: AbortSignal): ChatRecovery | undefined {
  return recoveries.get(signal);
}
