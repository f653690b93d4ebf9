// A WebSocket's outgoing side with every message held back for a while, the way a far service's
// messages reach a client: each leaves at the later of its own due time and the one before it, so
// the order is kept even when the delays vary; the close is queued behind the messages.
import { performance } from "node:perf_hooks";

/** The part of a WebSocket a session sends on (ws's WebSocket fits). */
export interface MessageSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export function delayedSocket(socket: MessageSocket, delayMs: () => number): MessageSocket {
  const queue: Array<{ due: number; run: () => void }> = [];
  let lastDue = 0;
  let armed = false;
  const arm = (ms: number) => {
    armed = true;
    setTimeout(pump, Math.ceil(ms));
  };
  const pump = () => {
    armed = false;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.due <= now) queue.shift()!.run();
    // Timers may fire a little early: what is not yet due waits for another turn.
    if (queue.length > 0) arm(queue[0]!.due - now);
  };
  const push = (run: () => void) => {
    const due = Math.max(performance.now() + delayMs(), lastDue);
    lastDue = due;
    queue.push({ due, run });
    if (!armed) arm(due - performance.now());
  };
  return {
    // A peer that has gone meanwhile makes ws's send and close no-ops.
    send: (data) => push(() => socket.send(data)),
    close: (code, reason) => push(() => socket.close(code, reason)),
  };
}
