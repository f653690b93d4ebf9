import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LoadReport } from "../../bench/lib/calls-load.ts";
import { NODE_FLAGS, ROOT } from "../../bench/lib/calls-procs.ts";
import type { SipLoadSpec } from "../../bench/lib/sip-load.ts";
import { placeSipCall } from "../../bench/lib/sip-uac.ts";
import { bindUdp } from "../bridges/sip/rtp/ports.ts";
import { rms } from "../bridges/sip/rtp/tone.ts";

/** Free UDP ports a moment ago: `count` distinct ones, each with the port two above it free too. */
async function freePorts(count: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < count) {
    const s = await bindUdp(0);
    const port = s.address().port;
    await new Promise<void>((r) => s.close(() => r()));
    if (port > 65000 || out.includes(port) || out.includes(port + 2)) continue;
    try {
      const above = await bindUdp(port + 2);
      await new Promise<void>((r) => above.close(() => r()));
      out.push(port);
    } catch {
      // taken: another
    }
  }
  return out;
}

/** SIPp's own UAS scenario for `calls` calls, echoing RTP back to its sender. */
function sippUas(sipPort: number, mediaPort: number, controlPort: number, calls = 1) {
  const child = spawn(
    "sipp",
    [
      "-sn",
      "uas",
      "-rtp_echo",
      "-i",
      "127.0.0.1",
      "-p",
      String(sipPort),
      "-mp",
      String(mediaPort),
      "-cp",
      String(controlPort),
      "-m",
      String(calls),
      "-nostdin",
      "-timeout",
      "60s",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const exit = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stderr })),
  );
  return { child, exit };
}

describe("placeSipCall (the SIP calls benchmark's UAC)", () => {
  it("places a call on SIPp's UAS, streams RTP at 20 ms, times the echoed packets, and hangs up", async () => {
    const [sipPort, mediaPort, controlPort] = await freePorts(3);
    const uas = sippUas(sipPort!, mediaPort!, controlPort!);
    try {
      const caller = new Int16Array(8000 * 2);
      for (let i = 0; i < caller.length; i++)
        caller[i] = Math.round(4000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
      expect(rms(caller)).toBeGreaterThan(0);
      // SIPp may still be starting: the INVITE is retransmitted until it answers.
      const report = await placeSipCall({
        target: { address: "127.0.0.1", port: sipPort! },
        caller,
        seconds: 1.5,
        codec: "pcmu",
      });
      expect(report.error).toBeUndefined();
      expect(report.status).toBe(200);
      expect(report.endedBy).toBe("uac");
      expect(report.byeStatus).toBe(200);
      expect(report.rtpSent).toBe(75);
      // The echo of every packet but those still in flight at the BYE.
      expect(report.rtpReceived).toBeGreaterThan(report.rtpSent - 5);
      expect(report.latenessMs).toHaveLength(report.rtpReceived);
      expect(report.streams).toBe(1);
      expect(Math.min(...report.latenessMs)).toBe(0);
      expect(report.latenessMs.every((l) => l >= 0)).toBe(true);
      const { code, stderr } = await uas.exit;
      expect(stderr).toBe("");
      expect(code).toBe(0);
    } finally {
      if (uas.child.exitCode === null) uas.child.kill("SIGKILL");
    }
  }, 60_000);

  it("reports a call nobody answers instead of hanging", async () => {
    const [silent] = await freePorts(1);
    const sink = await bindUdp(silent!);
    let invites = 0;
    sink.on("message", () => invites++);
    try {
      const report = await placeSipCall({
        target: { address: "127.0.0.1", port: silent! },
        caller: new Int16Array(800),
        seconds: 1,
        answerTimeoutMs: 2500,
      });
      expect(report.status).toBe(0);
      expect(report.error).toBe("no final response to the INVITE");
      expect(report.endedBy).toBeUndefined();
      // Sent at 0, then retransmitted after 500 ms and 1 s more (Timer A doubling; a late timer sends fewer).
      expect(invites).toBeGreaterThanOrEqual(2);
      expect(invites).toBeLessThanOrEqual(3);
    } finally {
      await new Promise<void>((r) => sink.close(() => r()));
    }
  }, 30_000);
});

describe("calls-load-sip.ts (a SIP load-generator process)", () => {
  it("runs its share of calls at their start times and reports them as the calls benchmark reads them", async () => {
    const [sipPort, mediaPort, controlPort] = await freePorts(3);
    const uas = sippUas(sipPort!, mediaPort!, controlPort!, 2);
    const dir = mkdtempSync(join(tmpdir(), "sip-load-"));
    try {
      const timeline = new Int16Array(8000 * 3);
      for (let i = 0; i < timeline.length; i++)
        timeline[i] = Math.round(3000 * Math.sin((2 * Math.PI * 250 * i) / 8000));
      writeFileSync(join(dir, "caller.s16"), new Uint8Array(timeline.buffer));
      // As far ahead as the calls benchmark starts its load processes: beside the rest of the
      // suite the process once began its calls too late for the window, none of their packets in it.
      const t0 = Date.now() + 2000;
      const spec: SipLoadSpec = {
        target: { address: "127.0.0.1", port: sipPort! },
        timelinePath: join(dir, "caller.s16"),
        // RTP for 2 s: it stops 1 s before the BYE.
        seconds: 3,
        startsAtMs: [t0, t0 + 300],
        windowMs: [t0 + 1000, t0 + 1800],
      };
      writeFileSync(join(dir, "spec.json"), JSON.stringify(spec));
      const child = spawn(
        process.execPath,
        [...NODE_FLAGS, "bench/lib/calls-load-sip.ts", join(dir, "spec.json"), join(dir, "out.json")],
        {
          cwd: ROOT,
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      let stderr = "";
      child.stderr.on("data", (d) => {
        stderr += d;
      });
      const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const report = JSON.parse(readFileSync(join(dir, "out.json"), "utf8")) as LoadReport;
      expect(report.calls).toHaveLength(2);
      for (const c of report.calls) {
        expect(c.error).toBeUndefined();
        expect(c.endedBy).toBe("uac");
        expect(c.mediaSent).toBe(100);
        expect(c.mediaReceived).toBeGreaterThan(95);
        expect(c.latenessMs).toHaveLength(c.mediaReceived);
        // Inside the window only, and fewer than all.
        expect(c.windowLatenessMs.length).toBeGreaterThan(0);
        expect(c.windowLatenessMs.length).toBeLessThan(c.latenessMs.length);
        expect(c.gapFrames).toBe(0);
      }
      expect(new Set(report.calls.map((c) => c.callSid)).size).toBe(2);
      expect(report.windowS).toBeCloseTo(0.8);
      expect(Number.isFinite(report.cpuUs)).toBe(true);
      const sipp = await uas.exit;
      expect(sipp.code).toBe(0);
    } finally {
      if (uas.child.exitCode === null) uas.child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
