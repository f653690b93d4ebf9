// The agent's voice in either output format (PCM at a rate, or whole Opus packets): how
// long a piece lasts, what is left of it after the first ms were heard, and pieces joined.
// The session and the playout use these so that nothing above them cares which it is.
import { concatPcm } from "../../codecs/pcm.ts";
import { type AgentAudio, OPUS_PACKET_MS, type OpusPackets, type OutputFormat } from "./transport.ts";

export function isPcm(audio: AgentAudio): audio is Int16Array {
  return audio instanceof Int16Array;
}

/** Duration of a piece of agent audio, ms. */
export function audioMs(audio: AgentAudio, format: OutputFormat): number {
  if (isPcm(audio)) return format.kind === "pcm" ? (audio.length * 1000) / format.rate : 0;
  return audio.packets.length * OPUS_PACKET_MS;
}

/**
 * What remains of `audio` once its first `ms` have been heard, and where that remainder starts
 * (ms into the piece). Opus is cut at packet boundaries: the packet playing is heard again whole.
 */
export function audioFrom(
  audio: AgentAudio,
  ms: number,
  format: OutputFormat,
): { rest: AgentAudio; startMs: number } {
  if (ms <= 0) return { rest: audio, startMs: 0 };
  if (isPcm(audio)) {
    const rate = format.kind === "pcm" ? format.rate : 48000;
    const skip = Math.min(audio.length, Math.round((ms * rate) / 1000));
    return { rest: audio.subarray(skip), startMs: (skip * 1000) / rate };
  }
  const skip = Math.min(audio.packets.length, Math.floor(ms / OPUS_PACKET_MS));
  return { rest: { packets: audio.packets.slice(skip) }, startMs: skip * OPUS_PACKET_MS };
}

/** Pieces of one format joined into one (e.g. a pre-synthesized apology). */
export function concatAudio(pieces: readonly AgentAudio[], format: OutputFormat): AgentAudio {
  if (format.kind === "pcm") return concatPcm(pieces.filter(isPcm));
  const packets: Uint8Array[] = [];
  for (const p of pieces) if (!isPcm(p)) packets.push(...(p as OpusPackets).packets);
  return { packets };
}
