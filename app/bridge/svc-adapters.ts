// The session's service ports on top of the API client: E6 for recognition (its body streamed
// while the caller speaks, or one request for a retry), E1 streaming
// for chat, E5 (default mode) for speech in the transport's own output format: pcm at its
// rate, or an Ogg Opus stream at 48 kHz whose packets are taken out here and handed on as
// they are. Nothing the transport cannot play directly is asked for, so nothing is transcoded.

import { OggDemuxer } from "../../codecs/ogg.ts";
import { isOpusHead, isOpusTags } from "../../codecs/opus-head.ts";
import { pcm16Format } from "../../src/api/asr.ts";
import { ChatAccumulator } from "../../src/api/chat-accumulate.ts";
import type { SvcClient } from "../../src/api/client.ts";
import type { TtsSession } from "../../src/api/tts-session.ts";
import { TTS_SAMPLE_RATES } from "../../src/api/types/index.ts";
import type {
  ChatEvent,
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
      },
    };
  }
}

/**
 * The session's services on the client; `requestHeaders` (the call's trace, when tracing is on)
 * gives the headers each request carries, by the request's signal.
 */
export function svcServices(
  client: SvcClient,
  models: ServiceModels,
  requestHeaders?: (signal?: AbortSignal) => Record<string, string>,
): SessionServices {
  const options = (signal?: AbortSignal) =>
    requestHeaders ? { signal, headers: requestHeaders(signal) } : { signal };
  const transcription = {
    model: models.asrModel,
    language: models.language,
    ...(models.hotwords.length ? { hotwords: models.hotwords } : {}),
  };
  return {
    asr: {
      async recognize(pcm, sampleRate, signal) {
        const result = await client.asr.recognize(
          pcm,
          pcm16Format(sampleRate),
          transcription,
          options(signal),
        );
        return result.text;
      },
      open(sampleRate, signal) {
        const upload = client.asr.upload(pcm16Format(sampleRate), transcription, options(signal));
        return {
          write: (pcm) => upload.write(pcm),
          end: () => upload.end().finalText(),
          abort: () => upload.abort(),
        };
      },
    },
    chat: {
      async *stream(messages, tools, signal): AsyncIterable<ChatEvent> {
        const stream = client.chat.stream(
          {
            model: models.chatModel,
            messages: [...messages],
            ...(tools.length ? { tools: [...tools] } : {}),
          },
          options(signal),
        );
        const acc = new ChatAccumulator();
        for await (const chunk of stream) {
          acc.add(chunk);
          const text = chunk.choices?.[0]?.delta?.content;
          if (text) yield { type: "text", text };
        }
        for (const call of acc.result().choices[0]?.message.tool_calls ?? []) {
          yield {
            type: "tool-call",
            call: { id: call.id, name: call.function.name, arguments: call.function.arguments },
          };
        }
      },
    },
    tts: {
      async open(format) {
        const sampleRate = format.kind === "pcm" ? format.rate : 48000;
        const rate = TTS_SAMPLE_RATES.find((r) => r === sampleRate);
        if (!rate)
          throw new Error(`TTS cannot produce ${sampleRate} Hz; rates: ${TTS_SAMPLE_RATES.join(", ")}`);
        const session = await client.tts.connect(
          {
            model: models.ttsModel,
            voice_id: models.voice,
            response_format: format.kind === "pcm" ? "pcm" : "opus_stream",
            sample_rate: rate,
            mode: "default",
          },
          requestHeaders ? { headers: requestHeaders() } : {},
        );
        return new ClientTtsStream(session, format);
      },
    },
  };
}
