// What the operator sees of a failing target: one warn line per failure episode, an info line
// with the count when it recovers, each circuit change once, and the counters.
import { pino } from "pino";
import { expect, it } from "vitest";
import { VirtualClock } from "../../../src/core/clock.ts";
import { ServiceHealth } from "../../../src/session/resilience/service-health.ts";
import { RecordingSink } from "./scripted-chat.ts";

function logged() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const log = pino({ level: "info" }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { log, lines };
}

it("logs one warn line per failure episode and one info line once the target answers again for a while", () => {
  const clock = new VirtualClock();
  const { log, lines } = logged();
  const sink = new RecordingSink();
  const health = new ServiceHealth({ clock, log, sink });
  const asr = health.target(
    { endpoint: "asr", baseUrl: "http://svc", model: "svcaudio-2.5-asr" },
    { failures: 3, windowMs: 30_000, openMs: 20_000 },
  );
  asr.succeeded();
  asr.failed("status_503");
  clock.advance(100);
  asr.failed("timeout");
  expect(lines.map((l) => l.msg)).toEqual([expect.stringMatching(/^service failing/)]);
  expect(lines[0]).toMatchObject({
    level: 40,
    endpoint: "asr",
    target: "svcaudio-2.5-asr@http://svc",
    kind: "status_503",
  });
  asr.failed("status_503");
  // The third failure in the window opened the circuit: said once.
  expect(lines.map((l) => l.msg)).toEqual([
    expect.stringMatching(/^service failing/),
    expect.stringMatching(/^service circuit open/),
  ]);
  // An answer between failures does not end the episode; one after 10 s without a failure does.
  clock.advance(900);
  asr.succeeded();
  expect(lines.slice(2)).toEqual([
    expect.objectContaining({ level: 30, msg: expect.stringMatching(/^service circuit closed/) }),
  ]);
  asr.failed("status_503");
  clock.advance(10_000);
  asr.succeeded();
  expect(lines.slice(3)).toEqual([
    expect.objectContaining({
      level: 30,
      msg: expect.stringMatching(/^service recovered/),
      failures: 4,
      forMs: 1000,
    }),
  ]);
  asr.succeeded();
  expect(lines).toHaveLength(4);
  expect(sink.failures.map((f) => `${f.endpoint}:${f.kind}`)).toEqual([
    "asr:status_503",
    "asr:timeout",
    "asr:status_503",
    "asr:status_503",
  ]);
  expect(sink.circuits.map((c) => c.state)).toEqual(["open", "closed"]);
  // One health per target: asking again gives the same circuit.
  expect(health.circuits()).toEqual([
    { endpoint: "asr", target: "svcaudio-2.5-asr@http://svc", state: "closed" },
  ]);
});
