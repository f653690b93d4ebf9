// Waiting for work at most so long: shutdowns that must not hang on a peer (an MCP server's
// session end, a worker thread still loading) but should let it finish when it can.

/** Waits for `work` at most `ms`, whatever its outcome; true when it settled in time. */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = await Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    late,
  ]);
  clearTimeout(timer);
  return settled;
}
