// Debian's chromium driven by playwright-core (no browser download), headless, quiet on a closed
// network, optionally with a fake microphone that plays a WAV file once.
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";

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
