// One request's abort that follows a longer-lived signal (a call's, the process's), without
// AbortSignal.any(). Node's any() registers every composite signal in FinalizationRegistries keyed
// on its sources, and a registration keyed on a source lives as long as that source: a WeakCell,
// two WeakRefs and an object per request for the whole life of a call. A 200-call SIP soak held
// 80,000 of them after an hour (one per utterance's upload), and a full GC processes every one in
// its pause: the main thread's mark-compact pauses grew from 13 to 34 ms (median) over the hour.
// Here the request's own controller is fed by a listener that is taken off when the request ends.

const NOTHING = (): void => {};

/** Aborts `child` when `parent` aborts (at once if it has); returns the unlink, to call when done. */
export function followAbort(parent: AbortSignal | undefined, child: AbortController): () => void {
  if (!parent) return NOTHING;
  if (parent.aborted) {
    child.abort(parent.reason);
    return NOTHING;
  }
  const onAbort = () => child.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return () => parent.removeEventListener("abort", onAbort);
}
