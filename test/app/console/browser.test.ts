// The console in a real browser (Debian's chromium, headless) against the real bridge and local
// service: a browser call from a fake microphone playing espeak-ng speech, barging in; and a
// simulated Twilio call watched live, its waterfall filling in, then its record opened. The
// recognizer is weak, so no test reads what it heard: only that turns appear where they should.
// Screenshots land in CONSOLE_SCREENSHOTS (default: a folder in the temp dir).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../../app/bridge/start.ts";
import { encodeWav } from "../../../codecs/wav.ts";
import { loadConfig } from "../../../src/config/config.ts";
import type { CallRecord } from "../../../src/records/call-record.ts";
import { simulateCall } from "../../../tools/twilio-sim/simulate.ts";
import { bridgeFetch } from "../../helpers/bridge-token.ts";
import { launchChromium, openConsole, screenshotDir } from "../../helpers/chromium.ts";
import { buildScene, speak } from "../../helpers/speech.ts";

const GREETING = "Thanks for calling Acme Bikes. How can I help you?";
/** Turns on screen: final ones, not the dashed ones still forming. */
const CALLER_TURN = "#transcript li.turn.caller:not(.forming)";
const AGENT_TURN = "#transcript li.turn.agent:not(.forming)";

/** The part of an <audio> element the test reads (this project's types have no DOM). */
interface MediaElement {
  readyState: number;
  duration: number;
  addEventListener(type: string, listener: () => void, options: { once: boolean }): void;
}

let bridge: Bridge;
let browser: Browser;
let dir: string;
const shots = screenshotDir();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-console-browser-"));
  // The microphone. The caller talks over the greeting, which needs no recognition and so plays at
  // a known time: from about 0.6 s after the microphone starts to about 4 s. The interruption is
  // longer than the 1 s that makes it one, and becomes a caller turn the agent answers. A question
  // later gives the agent a second turn to answer in case the first was heard as nothing.
  // (Timed after the agent's answer instead, the barge-in would hang on how fast the recognizer is.)
  const mic = buildScene(
    [
      { silenceMs: 2400 },
      { say: "Sorry, wait, I have a question about my bike." },
      { silenceMs: 7000 },
      { say: "Where are you located?" },
      { silenceMs: 12000 },
    ],
    { rate: 16000 },
  );
  const micWav = join(dir, "mic.wav");
  writeFileSync(micWav, encodeWav(mic.pcm, 16000));
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: dir,
      AGENT_RECORDING_DIR: join(dir, "recordings"),
      SVC_HOTWORDS: "open,opening,hours,where,located,address,goodbye,bye,that's all",
    },
  });
  bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }));
  browser = await launchChromium({ micWav });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

describe("the console in a browser", () => {
  it("calls the agent from the browser: greeting, a barge-in that stops playback, the caller answered", async () => {
    const { page, errors } = await openConsole(browser, bridge.entrances.console!);
    await page.getByRole("button", { name: "Call the agent" }).click();
    const phone = page.locator("#phone");
    await expect.poll(() => phone.getAttribute("data-state"), { timeout: 10_000 }).toBe("live");

    // The caller talks over the greeting: the bridge clears, and the page drops the agent's voice
    // it had queued, at once.
    await expect
      .poll(async () => Number(await phone.getAttribute("data-dropped-ms")), { timeout: 20_000 })
      .toBeGreaterThan(0);
    expect(Number(await phone.getAttribute("data-clears"))).toBeGreaterThanOrEqual(1);
    expect(await phone.getAttribute("data-agent-audio")).not.toBe("playing");

    // The greeting, the agent's first turn of the call this page placed (shown at once), with what
    // the caller heard of it and the rest struck through; the barge-in noted.
    await page.locator(AGENT_TURN).first().waitFor({ timeout: 20_000 });
    await expect.poll(() => page.locator(AGENT_TURN).first().textContent()).toContain(GREETING);
    await expect.poll(() => page.locator("#call-head .badge").textContent()).toBe("Browser");
    await page.locator("#transcript li.sys.barge").first().waitFor({ timeout: 10_000 });

    // The caller's words become a turn, answered by the agent.
    await page.locator(`${CALLER_TURN} ~ li.turn.agent:not(.forming)`).first().waitFor({ timeout: 40_000 });
    await page.screenshot({ path: join(shots, "browser-call-barge-in.png") });
    const callId = await page.locator("#live-list .call-item.selected").getAttribute("data-call-id");
    expect(callId).toMatch(/^BR[0-9a-f]{32}$/);

    await page.getByRole("button", { name: "Hang up" }).click();
    await expect.poll(() => phone.getAttribute("data-state")).toBe("ended");
    await page.locator(`#ended-list .call-item[data-call-id="${callId}"]`).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(shots, "browser-call-ended.png") });
    await page.close();
    expect(errors.join("\n")).toBe("");

    // The record agrees: the greeting cut short by the caller, a caller turn and an answer.
    const record = (await (await bridgeFetch(bridge, `/calls/${callId}`)).json()) as CallRecord;
    expect(record).toMatchObject({ transport: "browser", endReason: "caller hung up" });
    expect(record.turns[0]).toMatchObject({ role: "assistant", generated: GREETING, interrupted: true });
    const firstCaller = record.turns.findIndex((t) => t.role === "user");
    expect(firstCaller).toBeGreaterThan(0);
    expect(record.turns.slice(firstCaller).some((t) => t.role === "assistant")).toBe(true);
    expect(record.events.some((e) => e.type === "barge-in")).toBe(true);
  }, 90_000);

  it("shows a simulated Twilio call live as it happens, its waterfall filling in, then its record", async () => {
    const { page, errors } = await openConsole(browser, bridge.entrances.console!);
    const say = (text: string) => ({ samples: speak(text, { rate: 8000 }), rate: 8000, label: text });
    const call = simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      says: [say("Where are you located?"), say("That's all, goodbye.")],
      maxSeconds: 45,
    });

    // The call appears in the live list and on screen (nothing else was shown) as it starts.
    const item = page.locator('#live-list .call-item[data-transport="twilio"]');
    await item.waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator("#call-head .badge").textContent()).toBe("Twilio");
    // Its first answer's waterfall, drawn while the call goes on: each stage, the slowest flagged.
    const waterfall = page.locator(`${AGENT_TURN} .waterfall`).first();
    await waterfall.waitFor({ timeout: 30_000 });
    expect(await waterfall.locator(".wf-row.stage").count()).toBe(4);
    expect(await waterfall.locator(".wf-row.stage.slow").count()).toBe(1);
    expect(await waterfall.locator(".wf-row.total .wf-ms").textContent()).toMatch(/^\d+ ms$|^\d+\.\d s$/);
    await page.screenshot({ path: join(shots, "twilio-call-live.png") });

    const result = await call;
    // Ended, it leaves the live list for the ended one; its record opens with the recording.
    const ended = page.locator(`#ended-list .call-item[data-call-id="${result.callSid}"]`);
    await ended.waitFor({ timeout: 10_000 });
    expect(await page.locator(`#live-list .call-item[data-call-id="${result.callSid}"]`).count()).toBe(0);
    await ended.click();
    await page.locator("#call-head .state.ended").waitFor();
    expect(await page.locator(CALLER_TURN).count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator(AGENT_TURN).count()).toBeGreaterThanOrEqual(2);
    const audio = page.locator("#recording audio");
    await audio.waitFor({ timeout: 10_000 });
    const seconds = await audio.evaluate(
      (el) =>
        new Promise<number>((resolve) => {
          const media = el as unknown as MediaElement;
          if (media.readyState >= 1) resolve(media.duration);
          else media.addEventListener("loadedmetadata", () => resolve(media.duration), { once: true });
        }),
    );
    expect(seconds).toBeGreaterThan(result.durationMs / 1000 - 2);
    // The aggregate table counts this call's answers.
    await expect
      .poll(async () =>
        Number(
          await page
            .locator("#latency tbody tr", { hasText: "Voice to voice" })
            .locator("td.n")
            .textContent(),
        ),
      )
      .toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: join(shots, "twilio-call-record.png"), fullPage: true });
    // The ended calls are searched by the words said and filtered by transport.
    const listed = () => page.locator(`#ended-list .call-item[data-call-id="${result.callSid}"]`).count();
    await page.locator("#f-q").fill("acme bikes");
    await expect.poll(listed).toBe(1);
    await page.locator("#f-q").fill("zebra crossing");
    await expect.poll(listed).toBe(0);
    await expect.poll(() => page.locator("#ended-empty").textContent()).toBe("No call matches.");
    await page.locator("#f-q").fill("");
    await page.locator("#f-transport").selectOption("sip");
    await expect.poll(listed).toBe(0);
    await page.locator("#f-transport").selectOption("twilio");
    await expect.poll(listed).toBe(1);
    await page.screenshot({ path: join(shots, "ended-calls-search.png") });
    await page.close();
    expect(errors.join("\n")).toBe("");
  }, 90_000);
});
