import { afterEach, describe, expect, it } from "vitest";
import type { RtpEndpoint } from "../../../../bridges/sip/media-port.ts";
import { parsePortRange, UdpRtpPortPool } from "../../../../bridges/sip/rtp/port-pool.ts";
import { bindUdp, freeEvenRange } from "./ports.ts";

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const e of open.splice(0)) e.close();
});

describe("parsePortRange", () => {
  it("reads LOW-HIGH and starts on an even port", () => {
    expect(parsePortRange("10000-20000")).toEqual({ low: 10000, high: 20000 });
    expect(parsePortRange("10001-10003")).toEqual({ low: 10002, high: 10003 });
  });

  it("says what is wrong with a bad range", () => {
    expect(() => parsePortRange("10000")).toThrow(/expected LOW-HIGH/);
    expect(() => parsePortRange("20000-10000")).toThrow(/LOW ≤ HIGH/);
    expect(() => parsePortRange("10001-10001")).toThrow(/no even port/);
  });
});

describe("UdpRtpPortPool", () => {
  it("hands out even ports, skips one another program holds, rejects when all are taken, and reuses freed ones", async () => {
    const base = await freeEvenRange(3);
    const squatter = await bindUdp(base + 2);
    open.push(squatter);
    const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: `${base}-${base + 5}` });
    const a = await pool.open();
    const b = await pool.open();
    open.push(a, b);
    expect([a.port, b.port]).toEqual([base, base + 4]);
    expect(pool.inUse).toBe(2);
    await expect(pool.open()).rejects.toThrow(
      `no free RTP port in ${base}-${base + 5} on 127.0.0.1: 2 held by calls, 1 by other programs`,
    );
    a.close();
    a.close(); // idempotent
    expect(pool.inUse).toBe(1);
    const c: RtpEndpoint = await pool.open();
    open.push(c);
    expect(c.port).toBe(base);
    expect(pool.inUse).toBe(2);
  });

  it("does not hand out a port again while a call holds it", async () => {
    const base = await freeEvenRange(4);
    const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: `${base}-${base + 7}` });
    const got = await Promise.all([pool.open(), pool.open(), pool.open(), pool.open()]);
    open.push(...got);
    expect(new Set(got.map((e) => e.port)).size).toBe(4);
    expect(got.every((e) => e.port % 2 === 0)).toBe(true);
    await expect(pool.open()).rejects.toThrow(/no free RTP port/);
    for (const e of got) e.close();
    expect(pool.inUse).toBe(0);
  });
});
