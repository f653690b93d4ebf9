// What the bench bridge's calls were given to say: every sentence a speech session delivered to a
// call (its text, from `sentence-start`, and its audio, as the session received it), kept for
// turns-repeats.ts, which finds them in the callers' recordings. Wrapped around each call's services
// (BridgeOverrides.wrapServices), outside whatever the bridge does with them, so it sees what the
// call's session reads; the stream is otherwise untouched (a Proxy: every other member as it is).
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import type { SessionServices, TtsEvent, TtsStream } from "../../src/session/services.ts";

/** One synthesis of one sentence: a sentence said again is another (synthesis is not repeatable). */
export interface SpokenSentence {
  readonly text: string;
  /** Its audio as the caller's side decodes it (8 kHz PCM through µ-law), chunks in order. */
  readonly chunks: Int16Array[];
  /** Its end came: `chunks` hold all of it (else the session was cut, or closed, within it). */
  complete: boolean;
}

export class TtsTap {
  #sentences: SpokenSentence[] = [];

  /** For BridgeOverrides.wrapServices. */
  readonly wrap = (services: SessionServices): SessionServices => ({
    ...services,
    tts: {
      open: async (format) => this.#tap(await services.tts.open(format)),
    },
  });

  /** The sentences delivered since the last clear(). */
  get sentences(): readonly SpokenSentence[] {
    return this.#sentences;
  }

  clear(): void {
    this.#sentences = [];
  }

  #tap(stream: TtsStream): TtsStream {
    const sink = this.#sentences;
    let current: SpokenSentence | undefined;
    const tapped = (events: AsyncIterable<TtsEvent>): AsyncIterable<TtsEvent> => ({
      async *[Symbol.asyncIterator]() {
        for await (const ev of events) {
          if (ev.type === "sentence-start") {
            current = { text: ev.text, chunks: [], complete: false };
            sink.push(current);
          } else if (ev.type === "sentence-end" && current) {
            current.complete = true;
          } else if (ev.type === "audio" && current && ev.audio instanceof Int16Array) {
            // A copy (the session may reuse the array), as the Twilio caller hears it: µ-law.
            current.chunks.push(mulawDecode(mulawEncode(ev.audio)));
          }
          yield ev;
        }
      },
    });
    return new Proxy(stream, {
      get(target, prop) {
        if (prop === "events") return tapped(target.events);
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }
}
