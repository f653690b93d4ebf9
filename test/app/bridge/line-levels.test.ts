// The lines' usual caller levels outlive the bridge and are shared by the bridges on one database:
// taught at start by the records' last calls (real SQLite and PostgreSQL stores), and by the other
// bridges' calls as they end.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openLineLevels } from "../../../app/bridge/line-levels.ts";
import { Postgres } from "../../../bench/lib/postgres-server.ts";
import { silentLogger } from "../../../src/core/log.ts";
import type { CallLevels } from "../../../src/records/call-record.ts";
import type { CallStore } from "../../../src/records/store/call-store.ts";
import { PostgresCallStore } from "../../../src/records/store/postgres/store.ts";
import { SqliteCallStore } from "../../../src/records/store/sqlite/store.ts";
import { LINE_CALLS, LINE_KNOWN_CALLS, LINE_LEARN_MS } from "../../../src/session/line-level.ts";
import { until } from "../../helpers/until.ts";

const root = mkdtempSync(join(tmpdir(), "vb-line-levels-"));
let server: Postgres | undefined;
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await server?.close();
});

const sqlite = (file: string) =>
  SqliteCallStore.open({
    path: join(root, file),
    instance: "a",
    onWriteError: (err) => {
      throw err;
    },
  });

let n = 0;
/** A whole call as the session records it: its start, then its end with the caller's levels. */
function call(
  store: CallStore,
  transport: string,
  startedAt: string,
  levels: CallLevels | undefined,
): string {
  const callId = `CA${String(n++).padStart(4, "0")}`;
  store.append(callId, { type: "call-start", at: startedAt, callId, transport });
  store.append(callId, {
    type: "call-end",
    at: startedAt,
    reason: "stop",
    outcome: "caller_hangup",
    durationMs: 9000,
    ...(levels ? { levels } : {}),
  });
  return callId;
}

const heard = (callerDb: number, callerSpeechMs = 4000): CallLevels => ({
  callerDb,
  callerSpeechMs,
  roomHeldMs: 0,
});
const at = (s: number) => new Date(Date.UTC(2026, 11, 5, 9, 0, s)).toISOString();

describe("the lines' levels from the records", () => {
  it("teaches each line its last calls at start: those its caller spoke in long enough, none begun since", async () => {
    const store = await sqlite("calls.db");
    try {
      // The line's calls, oldest first: more than a line keeps, the oldest at -40 dBFS.
      for (let i = 0; i < LINE_CALLS; i++) call(store, "twilio", at(i), heard(-40));
      for (let i = 0; i < LINE_CALLS; i++) call(store, "twilio", at(100 + i), heard(i % 2 ? -20 : -22));
      // Calls that teach nothing: a caller who said one word, none who spoke, levels of an old version.
      call(store, "twilio", at(200), heard(-60, LINE_LEARN_MS - 20));
      call(store, "twilio", at(201), { roomHeldMs: 0, noiseDb: -50 });
      call(store, "twilio", at(202), { callerDb: -60, roomHeldMs: 0 });
      call(store, "twilio", at(203), undefined);
      // Another line, with too few calls to be known; and a call begun after the bridge started.
      for (let i = 0; i < LINE_KNOWN_CALLS - 1; i++) call(store, "sip", at(300 + i), heard(-30));
      call(store, "twilio", at(500), heard(-5));
      await store.flush();

      const { lines, close } = await openLineLevels(store, silentLogger, at(400));
      close();
      const twilio = lines.for("twilio");
      expect(twilio.calls).toBe(LINE_CALLS);
      // The newest LINE_CALLS: 16 at -22, 15 at -20 (none of the -40s, nor the -5 begun after).
      expect(twilio.usualDb()).toBe(-22);
      expect(lines.for("sip").calls).toBe(LINE_KNOWN_CALLS - 1);
      expect(lines.for("sip").usualDb()).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("leaves the lines to learn anew when the records cannot be read", async () => {
    const store = await sqlite("closed.db");
    call(store, "twilio", at(0), heard(-20));
    await store.close();
    const warned: string[] = [];
    const log = pino({ level: "warn" }, { write: (l: string) => void warned.push(JSON.parse(l).msg) });
    const { lines } = await openLineLevels(store, log, at(10));
    expect(lines.for("twilio").calls).toBe(0);
    expect(warned).toEqual(["line levels: records not read; the lines learn from calls anew"]);
  });

  describe("on a database several bridges share", () => {
    beforeAll(async () => {
      server = await Postgres.start();
    }, 60_000);

    it("teaches each bridge's lines the calls of the others as they end, and a bridge started later all of them", async () => {
      const url = await server!.database("line_levels");
      const open = (instance: string) => PostgresCallStore.open({ url, instance, log: silentLogger });
      const [a, b] = await Promise.all([open("a"), open("b")]);
      let c: CallStore | undefined;
      try {
        const fromA = await openLineLevels(a, silentLogger);
        // a hears the others once its feed listens (a call begun on b, and never ended, says so).
        let listening = false;
        a.watchOthers!(() => {
          listening = true;
        });
        await until(() => {
          b.append(`probe-${n++}`, {
            type: "call-start",
            at: new Date().toISOString(),
            callId: "probe",
            transport: "probe",
          });
          return listening;
        }, "a's feed of b's calls");
        for (let i = 0; i < LINE_KNOWN_CALLS; i++) call(b, "sip", new Date().toISOString(), heard(-26));
        // b's own calls teach a's line as they end; a's own calls are a's session's to teach.
        await until(() => fromA.lines.for("sip").calls === LINE_KNOWN_CALLS, "b's calls on a's line");
        expect(fromA.lines.for("sip").usualDb()).toBe(-26);
        // a's own call, then b's: only b's reaches a's lines (a's session teaches a's own).
        call(a, "sip", new Date().toISOString(), heard(-10));
        await a.flush();
        call(b, "sip", new Date().toISOString(), heard(-24));
        await until(() => fromA.lines.for("sip").calls > LINE_KNOWN_CALLS, "b's next call on a's line");
        expect(fromA.lines.for("sip").calls).toBe(LINE_KNOWN_CALLS + 1);
        expect(fromA.lines.for("sip").usualDb()).toBe(-26);
        await b.flush();

        // A bridge started later is taught every bridge's calls.
        c = await open("c");
        const fromC = await openLineLevels(c, silentLogger);
        expect(fromC.lines.for("sip").calls).toBe(LINE_KNOWN_CALLS + 2);
        expect(fromC.lines.for("sip").usualDb()).toBe(-26);
        fromA.close();
        fromC.close();
      } finally {
        await Promise.all([a.close(), b.close(), c?.close()]);
      }
    }, 60_000);
  });
});
