// A WebSocket TTS endpoint following E5's wire shapes, for the client tests. "Audio" is the UTF-8
// bytes of the spoken text (so tests can check exactly what was synthesized), 0.01 s per char.
import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import type { TtsClientEvent, TtsServerEvent } from "../../../src/api/types/index.ts";

export interface TtsScript {
  /** Spell the final event the older way (`response.audio.done`). */
  legacyDone?: boolean;
  /** Received client events and handshake details, for assertions. */
  received: TtsClientEvent[];
  handshakes: Array<{ url: string; authorization: string | undefined }>;
  /** When set, the server ends the session on its own this long after tts.create (stands in for the 60 s idle rule). */
  idleAfterMs?: number;
}

export function ttsHandler(script: TtsScript): (ws: WebSocket, req: IncomingMessage) => void {
  let n = 0;
  return (ws, req) => {
    script.handshakes.push({ url: req.url ?? "", authorization: req.headers.authorization });
    const sessionId = `sess-${++n}`;
    let buffer = "";
    const all: Buffer[] = [];
    let ev = 0;
    const send = (type: TtsServerEvent["type"], data: Record<string, unknown>) =>
      ws.send(JSON.stringify({ type, data: { session_id: sessionId, ...data }, event_id: `evt-${++ev}` }));
    const speak = (text: string) => {
      if (!text) return;
      send("tts.response.sentence.start", { text, started_at: Date.now() });
      // Two chunks per sentence, to exercise multi-chunk sentences.
      const bytes = Buffer.from(text);
      const half = Math.ceil(bytes.length / 2);
      for (const [i, part] of [bytes.subarray(0, half), bytes.subarray(half)].entries()) {
        if (part.length === 0) continue;
        all.push(part);
        send("tts.response.audio.delta", {
          status: i === 0 ? "unfinished" : "finished",
          audio: part.toString("base64"),
          duration: part.length * 0.01,
        });
      }
      send("tts.response.sentence.end", { text, ended_at: Date.now() });
    };
    const finish = () => {
      send(script.legacyDone ? "response.audio.done" : "tts.response.audio.done", {
        audio: Buffer.concat(all).toString("base64"),
      });
      ws.close(1000, "done");
    };
    send("tts.connection.done", {});
    ws.on("message", (raw) => {
      const msg = JSON.parse(raw.toString()) as TtsClientEvent;
      script.received.push(msg);
      if (msg.data.session_id !== sessionId) {
        send("tts.response.error", {
          code: "400",
          message: "unknown session_id",
          details: { error: "session" },
        });
        return;
      }
      switch (msg.type) {
        case "tts.create":
          send("tts.response.created", {});
          if (script.idleAfterMs !== undefined) setTimeout(finish, script.idleAfterMs);
          break;
        case "tts.text.delta": {
          if (msg.data.text.includes("OVERLOAD")) {
            send("tts.response.error", { code: "503", message: "overloaded", details: { error: "busy" } });
            return;
          }
          if (msg.data.text.includes("DROP")) {
            ws.terminate();
            return;
          }
          buffer += msg.data.text;
          // Sentence segmentation: speak every complete sentence, keep the rest buffered.
          for (let m = /^(.*?[.!?])\s*/s.exec(buffer); m; m = /^(.*?[.!?])\s*/s.exec(buffer)) {
            speak(m[1]!);
            buffer = buffer.slice(m[0].length);
          }
          break;
        }
        case "tts.text.flush":
          send("tts.text.flushed", {});
          speak(buffer.trim());
          buffer = "";
          break;
        case "tts.text.done":
          speak(buffer.trim());
          buffer = "";
          finish();
          break;
      }
    });
  };
}
