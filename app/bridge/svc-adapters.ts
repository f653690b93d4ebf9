// The session's service ports on top of the API client: E6 for recognition (its body streamed
// while the caller speaks, or one request for a retry), E1 streaming
// for chat, E5 (default mode) for speech in the transport's own output format: pcm at its
// rate, or an Ogg Opus stream at 48 kHz whose packets are taken out here and handed on as
// they are. Nothing the transport cannot play directly is asked for, so nothing is transcoded.
// A person waits on these requests: the client never sleeps to retry them (maxRetries 0), the
// call's recovery does (src/session/resilience), and their failures reach it as ServiceFailure.

import { OggDemuxer } from "../../codecs/ogg.ts";
import { isOpusHead, isOpusTags } from "../../codecs/opus-head.ts";
import { pcm16Format } from "../../src/api/asr.ts";
import { ChatAccumulator } from "../../src/api/chat-accumulate.ts";
import type { SvcClient } from "../../src/api/client.ts";
import {
  SvcAbortError,
  SvcConnectionError,
  SvcError,
  SvcHttpError,
  SvcStreamCutError,
  SvcStreamEventError,
  SvcTimeoutError,
  TtsClosedError,
  TtsResponseError,
} from "../../src/api/errors.ts";
import type { CallOptions } from "../../src/api/http.ts";
import type { TtsSession } from "../../src/api/tts-session.ts";
import { TTS_SAMPLE_RATES } from "../../src/api/types/index.ts";
import { acknowledgementHotwords } from "../../src/session/backchannel.ts";
import type { ChatSource, SourceEvent } from "../../src/session/resilience/chat-attempt.ts";
import { type FailureKind, kindOfStatus, ServiceFailure } from "../../src/session/resilience/failure.ts";
import type {
  ChatEvent,
  RecognitionHints,
  ServiceModels,
  SessionServices,
  TtsEvent,
  TtsStream,
} from "../../src/session/services.ts";
import { OPUS_PACKET_MS, type OutputFormat } from "../../src/session/transport.ts";

/** PCM bytes from the wire as Int16 samples (copied when unaligned). */
function int16(bytes: Uint8Array): Int16Array {
  if (bytes.byteOffset % 2 === 0)
    return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1);
  return new Int16Array(bytes.slice().buffer, 0, bytes.byteLength >> 1);
}

/** The audio packets of an Ogg Opus byte stream, as its chunks arrive (headers skipped). */
class OpusStreamPackets {
  readonly #demux = new OggDemuxer();
  push(bytes: Uint8Array): Uint8Array[] {
    const packets: Uint8Array[] = [];
    for (const p of this.#demux.push(bytes)) {
      if (p.data.length === 0 || isOpusHead(p.data) || isOpusTags(p.data)) continue;
      packets.push(p.data);
    }
    return packets;
  }
}

class ClientTtsStream implements TtsStream {
  readonly #session: TtsSession;
  readonly #opus: OpusStreamPackets | undefined;
  constructor(session: TtsSession, format: OutputFormat) {
    this.#session = session;
    if (format.kind === "opus") this.#opus = new OpusStreamPackets();
  }
  get closed(): boolean {
    return !this.#session.isOpen;
  }
  sendText(text: string): void {
    this.#session.sendText(text);
  }
  flush(): void {
    this.#session.flush();
  }
  close(): void {
    this.#session.close();
  }
  get events(): AsyncIterable<TtsEvent> {
    const session = this.#session;
    const opus = this.#opus;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* events();
        } catch (err) {
          throw asServiceFailure(err);
        }
      },
    };
    async function* events(): AsyncGenerator<TtsEvent> {
      for await (const out of session) {
        if (out.type === "audio" && opus) {
          const packets = opus.push(out.audio);
          if (packets.length)
            yield { type: "audio", audio: { packets }, durationMs: packets.length * OPUS_PACKET_MS };
        } else if (out.type === "audio") {
          const pcm = int16(out.audio);
          if (pcm.length) yield { type: "audio", audio: pcm, durationMs: out.duration * 1000 };
        } else if (out.type === "sentence.start") yield { type: "sentence-start", text: out.text };
        else if (out.type === "sentence.end") yield { type: "sentence-end", text: out.text };
        else if (out.type === "flushed") yield { type: "flushed" };
        else return;
      }
    }
  }
}

/** How a client error failed, for the recovery; undefined for an abort (ours, not the service's). */
function kindOf(err: SvcError): FailureKind | undefined {
  if (err instanceof SvcAbortError) return undefined;
  if (err instanceof SvcHttpError) return kindOfStatus(err.status);
  if (err instanceof SvcTimeoutError) return "timeout";
  if (err instanceof TtsClosedError) return "closed";
  if (err instanceof SvcStreamEventError || err instanceof TtsResponseError) return "error_event";
  if (err instanceof SvcConnectionError || err instanceof SvcStreamCutError) return "connection";
  return "other";
}

/** The client's error as the call's recovery reads it (an abort, or not the client's, as it is). */
export function asServiceFailure(err: unknown): unknown {
  if (!(err instanceof SvcError)) return err;
  const kind = kindOf(err);
  if (!kind) return err;
  return new ServiceFailure(err.message, kind, {
    status: err.status,
    retryAfterMs: err instanceof SvcHttpError ? err.retryAfterMs : undefined,
    cause: err,
  });
}

async function failing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw asServiceFailure(err);
  }
}

type Options = (signal?: AbortSignal) => CallOptions;

/**
 * E1 as a chat source: text as it streams, `chunk` for pieces without text (so the deadlines see
 * a tool call's arguments arrive), the tool calls once complete.
 */
export function svcChatSource(client: SvcClient, model: string, options: Options): ChatSource {
  return {
    async *stream(messages, tools, signal): AsyncIterable<SourceEvent> {
      const acc = new ChatAccumulator();
      try {
        const stream = client.chat.stream(
          { model, messages: [...messages], ...(tools.length ? { tools: [...tools] } : {}) },
          { ...options(signal), maxRetries: 0 },
        );
        for await (const chunk of stream) {
          acc.add(chunk);
          const text = chunk.choices?.[0]?.delta?.content;
          yield text ? { type: "text", text } : { type: "chunk" };
        }
      } catch (err) {
        throw asServiceFailure(err);
      }
      for (const call of acc.result().choices[0]?.message.tool_calls ?? []) {
        yield {
          type: "tool-call",
          call: { id: call.id, name: call.function.name, arguments: call.function.arguments },
        };
      }
    },
  };
}

export interface SvcServiceOptions {
  /** Longest wait for an E5 session to open, ms (default: the client's timeout). */
  ttsOpenMs?: number;
}

/**
 * The session's services on the client; `requestHeaders` (the call's trace, when tracing is on)
 * gives the headers each request carries, by the request's signal.
 */
export function svcServices(
  client: SvcClient,
  models: ServiceModels,
  requestHeaders?: (signal?: AbortSignal) => Record<string, string>,
  opts: SvcServiceOptions = {},
): SessionServices {
  const options: Options = (signal) =>
    requestHeaders ? { signal, headers: requestHeaders(signal) } : { signal };
  // Speech over the agent is recognized listening for acknowledgements too: with the embedded
  // recognizer more backchannels came out as such, and no interruption did (bench/lib/ack-probe.ts).
  const withHotwords = (words: readonly string[]) => {
    const hotwords = [...new Set(words)];
    return { model: models.asrModel, language: models.language, ...(hotwords.length ? { hotwords } : {}) };
  };
  // Built once per call: each request of the call is one or the other.
  const plain = withHotwords(models.hotwords);
  const overAgent = withHotwords([...models.hotwords, ...acknowledgementHotwords(models.language)]);
  const transcription = (hints: RecognitionHints | undefined) => (hints?.overAgent ? overAgent : plain);
  const chat = svcChatSource(client, models.chatModel, options);
  return {
    asr: {
      async recognize(pcm, sampleRate, signal, hints) {
        const result = await failing(() =>
          client.asr.recognize(pcm, pcm16Format(sampleRate), transcription(hints), {
            ...options(signal),
            maxRetries: 0,
          }),
        );
        return result.text;
      },
      open(sampleRate, signal, hints) {
        // An upload is never retried by the client (its body is not kept).
        const upload = client.asr.upload(pcm16Format(sampleRate), transcription(hints), options(signal));
        return {
          write: (pcm) => upload.write(pcm),
          end: () => failing(() => upload.end().finalText()),
          abort: () => upload.abort(),
        };
      },
    },
    chat: {
      async *stream(messages, tools, signal): AsyncIterable<ChatEvent> {
        for await (const ev of chat.stream(messages, tools, signal)) if (ev.type !== "chunk") yield ev;
      },
    },
    tts: {
      async open(format) {
        const sampleRate = format.kind === "pcm" ? format.rate : 48000;
        const rate = TTS_SAMPLE_RATES.find((r) => r === sampleRate);
        if (!rate)
          throw new Error(`TTS cannot produce ${sampleRate} Hz; rates: ${TTS_SAMPLE_RATES.join(", ")}`);
        const session = await failing(() =>
          client.tts.connect(
            {
              model: models.ttsModel,
              voice_id: models.voice,
              response_format: format.kind === "pcm" ? "pcm" : "opus_stream",
              sample_rate: rate,
              mode: "default",
            },
            {
              ...(requestHeaders ? { headers: requestHeaders() } : {}),
              ...(opts.ttsOpenMs ? { timeoutMs: opts.ttsOpenMs } : {}),
            },
          ),
        );
        return new ClientTtsStream(session, format);
      },
    },
  };
}
