// The browser call's audio thread (an AudioWorklet in a 16 kHz AudioContext). In: the
// microphone, cut into 20 ms frames of 16-bit PCM for the bridge. Out: the agent's voice, played
// back to back from a queue; the queue is dropped the moment the bridge says `clear` (barge-in).
// It counts what it has played per clear epoch, so the bridge knows what the caller heard.
/* global sampleRate, registerProcessor, AudioWorkletProcessor */

const FRAME_MS = 20;
/** Played audio between two reports to the bridge, ms. */
const REPORT_EVERY_MS = 100;

class CallAudio extends AudioWorkletProcessor {
  constructor() {
    super();
    this.frameSamples = (sampleRate * FRAME_MS) / 1000;
    this.frame = new Int16Array(this.frameSamples);
    this.fill = 0;
    /** Agent audio to play: Float32Array chunks; `head` indexes into the first. */
    this.queue = [];
    this.head = 0;
    this.queued = 0;
    this.epoch = 0;
    this.played = 0;
    this.reported = 0;
    this.playing = false;
    this.port.onmessage = (e) => this.onMessage(e.data);
  }

  onMessage(m) {
    if (m.type === "audio") {
      const f = new Float32Array(m.pcm.length);
      for (let i = 0; i < f.length; i++) f[i] = m.pcm[i] / 32768;
      this.queue.push(f);
      this.queued += f.length;
    } else if (m.type === "clear") {
      const dropped = this.queued;
      this.queue = [];
      this.head = 0;
      this.queued = 0;
      this.epoch = m.epoch;
      this.played = 0;
      this.reported = 0;
      this.setPlaying(false);
      this.port.postMessage({ type: "cleared", epoch: m.epoch, droppedMs: (dropped * 1000) / sampleRate });
    }
  }

  setPlaying(playing) {
    if (playing === this.playing) return;
    this.playing = playing;
    this.port.postMessage({ type: "playing", playing });
  }

  process(inputs, outputs) {
    const mic = inputs[0]?.[0];
    if (mic) this.capture(mic);
    const out = outputs[0]?.[0];
    if (out) this.playback(out);
    return true;
  }

  capture(mic) {
    for (let i = 0; i < mic.length; i++) {
      const s = Math.max(-1, Math.min(1, mic[i]));
      this.frame[this.fill++] = s < 0 ? s * 32768 : s * 32767;
      if (this.fill === this.frameSamples) {
        let sum = 0;
        for (const v of this.frame) sum += v * v;
        const level = Math.sqrt(sum / this.frameSamples) / 32768;
        this.port.postMessage({ type: "frame", pcm: this.frame.buffer, level }, [this.frame.buffer]);
        this.frame = new Int16Array(this.frameSamples);
        this.fill = 0;
      }
    }
  }

  playback(out) {
    let n = 0;
    while (n < out.length && this.queue.length > 0) {
      const chunk = this.queue[0];
      const take = Math.min(out.length - n, chunk.length - this.head);
      out.set(chunk.subarray(this.head, this.head + take), n);
      n += take;
      this.head += take;
      if (this.head === chunk.length) {
        this.queue.shift();
        this.head = 0;
      }
    }
    out.fill(0, n);
    if (n === 0) return;
    this.queued -= n;
    this.played += n;
    this.setPlaying(this.queued > 0);
    const playedMs = (this.played * 1000) / sampleRate;
    if (this.queued === 0 || playedMs - this.reported >= REPORT_EVERY_MS) {
      this.reported = playedMs;
      this.port.postMessage({ type: "played", epoch: this.epoch, ms: playedMs });
    }
  }
}

registerProcessor("call-audio", CallAudio);
