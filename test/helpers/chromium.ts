// Debian's chromium driven by playwright-core (no browser download), headless, quiet on a closed
// network, optionally with a fake microphone that plays a WAV file once.
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const QUIET = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  // Without these chromium keeps calling home, which on a closed network means retrying for ever.
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless chromium (a fresh profile each time); with `micWav`, its microphone plays that file once. */
export function launchChromium(opts: { micWav?: string } = {}): Promise<Browser> {
  const mic = opts.micWav
    ? [
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        `--use-file-for-fake-audio-capture=${opts.micWav}%noloop`,
      ]
    : [];
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...QUIET, ...mic] });
}

/** Where tests leave their screenshots (CONSOLE_SCREENSHOTS, else a folder in the temp dir). */
export function screenshotDir(): string {
  const dir = process.env.CONSOLE_SCREENSHOTS ?? join(tmpdir(), "voice-bridge-console-screenshots");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The console at `consoleUrl` (the bridge's console entrance, `/?token=…` when it has a token) in
 * a new tab, its live feed connected; `errors` collects what the page throws.
 */
export async function openConsole(
  browser: Browser,
  consoleUrl: string,
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`${err.message}\n${err.stack}`));
  await page.goto(consoleUrl);
  await expect.poll(() => page.locator("#feed").getAttribute("data-state")).toBe("live");
  return { page, errors };
}
