// The console places a call (its "Place a call" form, POST /calls with the console's cookie) in a
// real browser; the call, answered 486 by SIPp standing in for the trunk, is listed as Outbound
// with its dial outcome.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import { launchChromium, openConsole } from "../helpers/chromium.ts";
import { startBusyCallee } from "./sipp-busy.ts";

let dir: string;
let bridge: Bridge;
let browser: Browser;
let sipp: ChildProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "console-dial-"));
  const busy = await startBusyCallee(dir);
  sipp = busy.process;
  const trunkPort = busy.port;
  bridge = await startBridge(
    loadConfig({
      env: {
        HOST: "127.0.0.1",
        PORT: "0",
        SIP_HOST: "127.0.0.1",
        SIP_PORT: "0",
        RTP_PORTS: "36600-36699",
        SVC_LOCAL_DATA_DIR: join(dir, "data"),
        SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
        OUTBOUND_CALLS_PER_SECOND: "1",
      },
    }),
    pino({ level: process.env.E2E_LOG ?? "silent" }),
  );
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.close(0);
  sipp?.kill("SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("placing a call from the console", () => {
  it("posts the call and lists it as outbound, busy", async () => {
    const { page, errors } = await openConsole(browser, bridge.entrances.console!);
    await page.fill("#dial-to", "+15550123");
    await page.selectOption("#dial-via", "sip");
    await page.click("#dial button[type=submit]");
    await expect
      .poll(() => page.locator("#dial-status").textContent(), { timeout: 10_000 })
      .toMatch(/^placed out-/);
    const item = page.locator("#ended-list .call-item", { has: page.locator(".badge.outbound") });
    await item.first().waitFor({ timeout: 20_000 });
    const text = await item.first().textContent();
    expect(text).toContain("→ +15550123");
    expect(text).toContain("busy");
    // A bad number is refused with the field named, shown where the form is.
    await page.fill("#dial-to", "x");
    await page.click("#dial button[type=submit]");
    await expect.poll(() => page.locator("#dial-status").textContent()).toMatch(/^to: /);
    expect(errors).toEqual([]);
  }, 60_000);

  it("answers 429 with Retry-After beyond outbound.callsPerSecond", async () => {
    const post = () =>
      fetch(`${bridge.url}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
        body: JSON.stringify({ to: "+15550124", via: "sip" }),
      });
    // Placed once the last test's call has given its second back (a refusal places nothing).
    const placed = async () => {
      const res = await post();
      await res.arrayBuffer();
      return res.status;
    };
    await expect.poll(placed, { timeout: 5_000 }).toBe(202);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /callsPerSecond/,
    );
  });
});
