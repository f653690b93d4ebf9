// The console with several agents, in a real browser (Debian's chromium) against the real bridge:
// "Call the agent" offers each agent and calls the one chosen; a call's header says which agent
// took it, and once the call is over its analysis (summary and fields) appears.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../../app/bridge/start.ts";
import { encodeWav } from "../../../codecs/wav.ts";
import { simulateCall } from "../../../tools/twilio-sim/simulate.ts";
import { type AgentsFixture, agentsFixture } from "../../helpers/agents-fixture.ts";
import { launchChromium, openConsole, screenshotDir } from "../../helpers/chromium.ts";

let f: AgentsFixture;
let bridge: Bridge;
let browser: Browser;
const shots = screenshotDir();

beforeAll(async () => {
  f = await agentsFixture();
  bridge = await startBridge(f.load(), pino({ level: process.env.E2E_LOG ?? "silent" }));
  const micWav = join(f.dir, "mic.wav");
  writeFileSync(micWav, encodeWav(new Int16Array(16000 * 20), 16000));
  browser = await launchChromium({ micWav });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await bridge?.close(0);
  await f?.server.close();
  if (f) rmSync(f.dir, { recursive: true, force: true });
});

describe("the console with several agents", () => {
  it("offers each agent to call, and calls the one chosen", async () => {
    const { page, errors } = await openConsole(browser, bridge.entrances.console!);
    const choice = page.locator("#agent-choice");
    await expect.poll(() => choice.isVisible()).toBe(true);
    expect(await choice.locator("option").allTextContents()).toEqual([
      "default",
      "sales",
      "support",
      "broken",
    ]);
    await choice.selectOption("sales");
    await page.getByRole("button", { name: "Call the agent" }).click();
    await expect
      .poll(() => page.locator("#phone").getAttribute("data-state"), { timeout: 10_000 })
      .toBe("live");
    await expect
      .poll(() => page.locator("#call-head .agent-tag").textContent(), { timeout: 10_000 })
      .toBe("sales");
    await expect
      .poll(() => page.locator("#transcript li.turn.agent:not(.forming)").first().textContent(), {
        timeout: 20_000,
      })
      .toContain("Sales line.");
    await page.locator("#hang-up").click();
    await expect
      .poll(() => page.locator("#phone").getAttribute("data-state"), { timeout: 10_000 })
      .toBe("ended");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows the agent of a call, then its analysis once the call is over", async () => {
    const { page, errors } = await openConsole(browser, bridge.entrances.console!);
    const call = simulateCall({
      url: bridge.url,
      to: "+15550001",
      params: { account: "B-2" },
      hangUpAfterMs: 500,
      maxSeconds: 8,
    });
    await page.locator('#live-list .call-item[data-transport="twilio"]').first().waitFor({ timeout: 15_000 });
    await page.locator('#live-list .call-item[data-transport="twilio"]').first().click();
    await expect.poll(() => page.locator("#call-head .agent-tag").textContent()).toBe("sales");
    const result = await call;
    const analysis = page.locator('#call-head .analysis[data-status="done"]');
    await analysis.waitFor({ timeout: 20_000 });
    expect(await analysis.locator(".summary").textContent()).toMatch(/Sales line/);
    expect(await analysis.locator("dt").allTextContents()).toEqual(["line", "callback"]);
    expect(await analysis.locator("dd").allTextContents()).toEqual(["sales", "false"]);
    await page.screenshot({ path: join(shots, "agents-analysis.png") });
    // The ended call's line in the list names its agent.
    await expect
      .poll(() =>
        page.locator(`#ended-list .call-item[data-call-id="${result.callSid}"] .line`).textContent(),
      )
      .toMatch(/ · sales · /);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
