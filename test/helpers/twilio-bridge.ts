// A bridge for a test that calls it as Twilio would (tools/twilio-sim): on loopback at a port of
// its own, SIP off, the embedded local service in `dataDir`, Twilio requests signed with
// TWILIO_TEST_AUTH_TOKEN. Its log is silent unless E2E_LOG names a level.
import { pino } from "pino";
import { type Bridge, type BridgeOverrides, startBridge } from "../../app/bridge/start.ts";
import { type Config, loadConfig } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";

export const TWILIO_TEST_AUTH_TOKEN = "test-auth-token-0123456789";

/** The bridge's configuration: those settings and `env` (which may override them), over `file`'s (YAML). */
export function twilioTestConfig(dataDir: string, env: Record<string, string> = {}, file?: string): Config {
  return loadConfig({
    ...(file ? { file } : {}),
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: dataDir,
      TWILIO_ACCOUNT_SID: `AC${"0".repeat(32)}`,
      TWILIO_AUTH_TOKEN: TWILIO_TEST_AUTH_TOKEN,
      ...env,
    },
  });
}

/** Starts the bridge; Twilio's REST API (new TwiML for a call) is taken and ignored unless overridden. */
export function startTwilioTestBridge(
  config: Config,
  overrides: BridgeOverrides = {},
  log: Logger = pino({ level: process.env.E2E_LOG ?? "silent" }),
): Promise<Bridge> {
  return startBridge(config, log, { callControl: { async updateTwiml() {} }, ...overrides });
}
