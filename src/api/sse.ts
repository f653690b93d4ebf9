// The one server-sent-events decoder (WHATWG event-stream rules): comments, multi-line data,
// `event:`/`id:`/`retry:` fields, LF / CR / CRLF line ends, and chunk boundaries anywhere, including
// inside a CRLF pair or a multi-byte UTF-8 character. Used by every streaming endpoint of the client
// and usable as is by tests of the local service.

export interface SseEvent {
  /** The `event:` field, or "message" when the event had none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen (the stream's last-event-id), if any. */
  id?: string;
  /** A `retry:` value carried by this event, if any. */
  retry?: number;
}

export class SseDecoder {
  private readonly utf8 = new TextDecoder("utf-8");
  private line = "";
  private sawCR = false;
  private bomChecked = false;
  private data: string[] = [];
  private eventType = "";
  private lastId: string | undefined;
  private retry: number | undefined;
  private hasFields = false;

  /** Feed bytes or text; returns the events completed by it, in order. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === "string" ? chunk : this.utf8.decode(chunk, { stream: true });
    if (!this.bomChecked && text.length > 0) {
      this.bomChecked = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 10 && this.sawCR && i === start) {
        // The LF of a CRLF whose CR ended the previous piece: that line was already taken.
        this.sawCR = false;
        start = i + 1;
        continue;
      }
      this.sawCR = false;
      this.takeLine(this.line + text.slice(start, i), out);
      this.line = "";
      if (c === 13) {
        if (i + 1 >= text.length) this.sawCR = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    if (start < text.length) {
      this.line += text.slice(start);
      this.sawCR = false;
    }
    return out;
  }

  /**
   * Call at the end of the byte stream. An unterminated last line is taken as a line (the WHATWG
   * rules drop it, with any event not closed by a blank line). Returns true when the stream ended in
   * the middle of an event, i.e. data or fields were received that no blank line dispatched.
   */
  end(): { truncated: boolean } {
    const tail = this.utf8.decode();
    if (tail) this.line += tail;
    const partialLine = this.line.length > 0;
    if (partialLine) this.takeLine(this.line, []);
    this.line = "";
    const truncated = partialLine || this.hasFields;
    this.resetEvent();
    return { truncated };
  }

  private takeLine(line: string, out: SseEvent[]): void {
    if (line === "") {
      this.dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" comment, e.g. keep-alive
    const colon = line.indexOf(":");
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = "";
    } else {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    switch (field) {
      case "data":
        this.data.push(value);
        this.hasFields = true;
        break;
      case "event":
        this.eventType = value;
        this.hasFields = true;
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        this.hasFields = true;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        this.hasFields = true;
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length > 0) {
      const ev: SseEvent = { event: this.eventType || "message", data: this.data.join("\n") };
      if (this.lastId !== undefined) ev.id = this.lastId;
      if (this.retry !== undefined) ev.retry = this.retry;
      out.push(ev);
    }
    this.resetEvent();
  }

  private resetEvent(): void {
    this.data = [];
    this.eventType = "";
    this.retry = undefined;
    this.hasFields = false;
  }
}

/** Raised by readSse when the byte stream ends inside an event. */
export class SseTruncatedError extends Error {
  override name = "SseTruncatedError";
}

/**
 * Decode a byte stream into events. When the stream ends inside an event (no closing blank line),
 * throws SseTruncatedError after yielding every complete event.
 */
export async function* readSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const dec = new SseDecoder();
  for await (const chunk of body) {
    for (const ev of dec.push(chunk)) yield ev;
  }
  if (dec.end().truncated) throw new SseTruncatedError("event stream ended in the middle of an event");
}
