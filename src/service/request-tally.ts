// How many requests the service has handled per endpoint (`POST /v1/chat/completions`, …), as their
// bodies describe them: a benchmark reads how many chat requests a bridge made per caller turn at
// the service itself, not from the bridge's own account. A bridge's turns stream (its after-call
// analysis does not), and a turn's request ends with the caller's words or a tool's result, where
// an opening line written by the model (no greeting configured) ends with the instructions.
import { isObject } from "../core/guards.ts";

export interface EndpointCount {
  requests: number;
  /** Of which with `"stream": true` in their JSON body. */
  streamed: number;
  /** Of the streamed, those whose `messages` end with a user or tool message (answers to a turn). */
  answers: number;
}

/** What the tally and the debug log say of a request's JSON body. */
export interface RequestShape {
  stream?: boolean;
  /** The role of the last of its `messages`. */
  lastRole?: string;
}

export function requestShape(body: unknown): RequestShape {
  if (!isObject(body)) return {};
  const shape: RequestShape = {};
  if (typeof body.stream === "boolean") shape.stream = body.stream;
  const last = Array.isArray(body.messages) ? body.messages.at(-1) : undefined;
  if (isObject(last) && typeof last.role === "string") shape.lastRole = last.role;
  return shape;
}

export class RequestTally {
  private readonly counts = new Map<string, EndpointCount>();

  add(endpoint: string, shape: RequestShape): void {
    let c = this.counts.get(endpoint);
    if (!c) {
      c = { requests: 0, streamed: 0, answers: 0 };
      this.counts.set(endpoint, c);
    }
    c.requests++;
    if (shape.stream !== true) return;
    c.streamed++;
    if (shape.lastRole === "user" || shape.lastRole === "tool") c.answers++;
  }

  /** Counts so far by `METHOD /route` (the route's pattern, e.g. `GET /v1/files/:id`). */
  snapshot(): Readonly<Record<string, Readonly<EndpointCount>>> {
    return Object.fromEntries([...this.counts].map(([k, c]) => [k, { ...c }]));
  }
}
