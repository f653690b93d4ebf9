// What is forming in one call, seen from outside the session: its transport and its services
// are wrapped on their way in (as the recording wraps the transport), so the console shows the
// caller speaking, the words heard, the agent's reply as it is written and its audio starting
// and being cut, while neither the session nor any bridge knows the console exists.
// Only the wrappers' own calls are added per frame: one function call on the way through.
import { PassThroughTransport } from "../../src/session/pass-through-transport.ts";
import type { ChatEvent, RecognizerStream, SessionServices, TtsStream } from "../../src/session/services.ts";
import type { AgentAudio, CallTransport, TransportListener } from "../../src/session/transport.ts";
import type { CallActivity } from "./live-events.ts";

export type ActivitySink = (activity: CallActivity) => void;

/** The transport, watched: keypad digits, and the agent's audio going out, cut off, played out. */
export class WatchedTransport extends PassThroughTransport {
  readonly #emit: ActivitySink;
  #playing = false;

  constructor(inner: CallTransport, emit: ActivitySink) {
    super(inner);
    this.#emit = emit;
  }

  override attach(listener: TransportListener): void {
    this.inner.attach({
      audio: (frame, speaker) => listener.audio(frame, speaker),
      speakerLeft: (id) => listener.speakerLeft?.(id),
      dtmf: (digit) => {
        this.#emit({ kind: "dtmf", digit });
        listener.dtmf(digit);
      },
      played: (ms) => {
        listener.played(ms);
        if (this.#playing && ms >= this.inner.queuedMs() - 0.5) this.#state(false, "idle");
      },
      ended: (reason) => listener.ended(reason),
    });
  }

  override play(audio: AgentAudio): void {
    this.inner.play(audio);
    if (!this.#playing) this.#state(true, "playing");
  }

  override clear(): void {
    this.inner.clear();
    if (this.#playing) this.#state(false, "cleared");
  }

  #state(playing: boolean, state: "playing" | "cleared" | "idle"): void {
    this.#playing = playing;
    this.#emit({ kind: "agent-audio", state });
  }
}

/** One call's view of the services, watched: recognition, the chat stream, the words sent to speech. */
export function watchServices(s: SessionServices, emit: ActivitySink): SessionServices {
  let drafts = 0;
  return {
    asr: {
      async recognize(pcm, rate, signal) {
        const t0 = performance.now();
        const text = await s.asr.recognize(pcm, rate, signal);
        heard(emit, text, performance.now() - t0);
        return text;
      },
      open(rate, signal) {
        emit({ kind: "caller-speaking" });
        return watchRecognition(s.asr.open(rate, signal), emit);
      },
    },
    chat: {
      stream(messages, tools, signal) {
        emit({ kind: "agent-thinking" });
        return watchChat(s.chat.stream(messages, tools, signal), emit);
      },
    },
    tts: {
      async open(format) {
        return watchSpeech(await s.tts.open(format), emit, () => ++drafts);
      },
    },
  };
}

function heard(emit: ActivitySink, text: string, asrMs: number): void {
  const words = text.trim();
  emit(words ? { kind: "caller-heard", text: words, asrMs: Math.round(asrMs) } : { kind: "caller-dropped" });
}

function watchRecognition(stream: RecognizerStream, emit: ActivitySink): RecognizerStream {
  let settled = false;
  return {
    write: (pcm) => stream.write(pcm),
    async end() {
      settled = true;
      emit({ kind: "caller-recognizing" });
      const t0 = performance.now();
      try {
        const text = await stream.end();
        heard(emit, text, performance.now() - t0);
        return text;
      } catch (err) {
        emit({ kind: "caller-dropped" });
        throw err;
      }
    },
    abort() {
      if (!settled) emit({ kind: "caller-dropped" });
      settled = true;
      stream.abort();
    },
  };
}

async function* watchChat(events: AsyncIterable<ChatEvent>, emit: ActivitySink): AsyncIterable<ChatEvent> {
  for await (const ev of events) {
    if (ev.type === "tool-call")
      emit({ kind: "agent-tool", name: ev.call.name, arguments: ev.call.arguments });
    yield ev;
  }
}

/** A TTS session that numbers its reply (a spare opened ahead of need gets a number once it speaks). */
function watchSpeech(stream: TtsStream, emit: ActivitySink, nextDraft: () => number): TtsStream {
  let draft = 0;
  let text = "";
  let ended = false;
  return {
    get closed() {
      return stream.closed;
    },
    events: stream.events,
    sendText(t) {
      if (draft === 0) draft = nextDraft();
      text += t;
      emit({ kind: "agent-text", draft, text });
      stream.sendText(t);
    },
    flush: () => stream.flush(),
    close() {
      if (draft !== 0 && !ended) emit({ kind: "agent-text-end", draft });
      ended = true;
      stream.close();
    },
  };
}
