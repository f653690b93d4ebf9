// The service-time figures of `turns` and `calls` (bench/lib/service-time.ts): their arithmetic on
// known turns, and the chat requests read back from a real local service's debug log, the way the
// calls benchmark reads its service process's log.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { chatRequestsInLog, serviceTimeFigures } from "../../bench/lib/service-time.ts";
import { startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";

describe("service-time figures", () => {
  it("the floor is the medians' sum; each turn adds what it took beyond the floor or its wait", () => {
    const turns = [
      { asrMs: 400, llmTtftMs: 550, ttsFirstAudioMs: 250, eouDelayMs: 600, voiceToVoiceMs: 1300 },
      { asrMs: 420, llmTtftMs: 560, ttsFirstAudioMs: 260, eouDelayMs: 1500, voiceToVoiceMs: 1600 },
      { asrMs: 380, llmTtftMs: 1100, ttsFirstAudioMs: 240, eouDelayMs: 700, voiceToVoiceMs: 2000 },
    ];
    const f = serviceTimeFigures({
      turns,
      chatRequests: { answers: 4, openings: 2, notStreamed: 3 },
      answeredTurns: 3,
      unansweredTurns: 1,
    });
    expect(f.service_floor_ms).toBe(400 + 560 + 250);
    // 1300 - 1210, 1600 - 1500 (the wait was longer), 2000 - 1210.
    expect(f.bridge_added_ms_p50).toBe(100);
    expect(f.v2v_ms_p50).toBe(1600);
    expect(f.v2v_ms_p90).toBe(2000);
    expect(f.chat_requests_per_turn).toBe(1.33);
    expect(f.unanswered_turns).toBe(1);
    expect(f.service_time.chat_requests_opening).toBe(2);
    expect(f.service_time.chat_requests_not_streamed).toBe(3);
  });

  it("says null where nothing was measured", () => {
    const f = serviceTimeFigures({ turns: [], chatRequests: null, answeredTurns: 0, unansweredTurns: null });
    expect(f.v2v_ms_p50).toBeNull();
    expect(f.service_floor_ms).toBeNull();
    expect(f.bridge_added_ms_p50).toBeNull();
    expect(f.chat_requests_per_turn).toBeNull();
  });

  it("counts a service's E1 requests from its debug log, answers apart, within the span", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "svc-tally-log-"));
    const svc = await startLocalService({
      dataDir: dir,
      apiKeys: ["k"],
      engineProfile: "synthetic",
      logger: pino({ level: "debug" }, sink),
    });
    try {
      const post = (stream: boolean, role = "user") =>
        fetch(`${svc.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: "Bearer k", "content-type": "application/json" },
          body: JSON.stringify({
            model: "svc-3.5-flash",
            messages: [{ role, content: "Hi" }],
            stream,
          }),
        }).then((r) => r.text());
      const from = Date.now();
      await post(true);
      await post(true);
      await post(false);
      await post(true, "system"); // an opening line: the model speaks first
      const to = Date.now();
      // The next request's line falls after the span: the clock has moved past its end.
      await until(() => Date.now() > to, "the next millisecond");
      await post(true);
      const log = lines.join("");
      expect(chatRequestsInLog(log, [from, to])).toEqual({ answers: 2, openings: 1, notStreamed: 1 });
      const all = chatRequestsInLog(log, [from, Date.now()]);
      expect(all).toEqual({ answers: 3, openings: 1, notStreamed: 1 });
      expect(svc.requests()["POST /v1/chat/completions"]).toEqual({ requests: 5, streamed: 4, answers: 3 });
    } finally {
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
