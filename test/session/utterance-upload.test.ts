// The utterance goes to recognition in pieces read from the window into one reused buffer: what
// the recognizer receives, in order, must be the utterance's audio exactly.
import { describe, expect, it } from "vitest";
import type { RecognizerStream } from "../../src/session/services.ts";
import { AudioWindow } from "../../src/session/utterance.ts";
import { UtteranceUpload } from "../../src/session/utterance-upload.ts";

describe("UtteranceUpload", () => {
  it("sends the utterance from its start (pre-roll included) in pieces that join up exactly", async () => {
    const window = new AudioWindow(16000, 60);
    const frame = new Int16Array(320);
    let t = 0;
    const speak = (frames: number, upload?: UtteranceUpload) => {
      for (let f = 0; f < frames; f++) {
        for (let i = 0; i < 320; i++) frame[i] = Math.round(8000 * Math.sin((t + i) / 9));
        t += 320;
        window.write(frame);
        upload?.feed();
      }
    };
    speak(60); // 1.2 s before speech is noticed
    const received: Int16Array[] = [];
    const stream: RecognizerStream = {
      write: (pcm) => received.push(pcm.slice()), // a copy: the upload reuses its buffer
      end: async () => "done",
      abort: () => {},
    };
    const upload = new UtteranceUpload(stream, window, 700); // pre-roll from 0.7 s
    speak(97, upload);
    expect(await upload.end()).toBe("done");
    expect(received.length).toBeGreaterThan(10); // 100 ms pieces
    const joined = Int16Array.from(received.flatMap((p) => [...p]));
    expect([...joined]).toEqual([...window.slice(700)]);
  });
});
