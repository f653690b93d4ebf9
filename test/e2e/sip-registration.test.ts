// The bridge registers with a real registrar that requires digest: Kamailio (auth's
// pv_www_authenticate, registrar, usrloc) granting 4 s bindings so refreshes come quickly. The
// bridge registers, refreshes, a baresip call to the registered user through Kamailio reaches the
// agent (its greeting is heard), Kamailio restarted (bindings lost, new nonces) gets a new
// registration, the bridge unregisters when it closes; a wrong password is said once and retried.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { levelDbfs } from "../../codecs/pcm.ts";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import { KamailioRegistrar } from "../bridges/sip/kamailio-registrar.ts";
import { Baresip } from "../helpers/baresip.ts";
import { launchChromium, openConsole } from "../helpers/chromium.ts";
import { freePort } from "../helpers/free-port.ts";
import { until } from "../helpers/until.ts";

let dir: string;
let port: number;
let kamailio: KamailioRegistrar | undefined;
const USER = "1001";
const PASSWORD = "s3cret-pw";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-sip-register-"));
  port = await freePort();
});

afterAll(async () => {
  await kamailio?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Entry {
  msg: string;
  level: number;
  to?: string;
}

async function bridgeWith(password: string, logged: Entry[], transport = "udp"): Promise<Bridge> {
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_HOST: "127.0.0.1",
      SIP_PORT: "0",
      RTP_PORTS: "34000-34499",
      SVC_LOCAL_DATA_DIR: join(dir, `data-${password}-${transport}`),
      AGENT_GREETING: "Thanks for calling. How can I help?",
      SIP_REGISTER: `sip:${USER}:${password}@127.0.0.1:${port};transport=${transport};expires=60`,
    },
  });
  const sink = { write: (line: string) => void logged.push(JSON.parse(line) as Entry) };
  return startBridge(config, pino({ level: "info" }, sink));
}

/** A call from baresip to the registered user through Kamailio: answered, the greeting heard. */
async function callThroughRegistrar(logged: Entry[]): Promise<void> {
  const wav = join(mkdtempSync(join(dir, "caller-")), "in.wav");
  writeFileSync(wav, encodeWav(new Int16Array(8000 * 20), 8000));
  const phone = await Baresip.start({ codec: "pcmu", wav });
  const said = () => logged.filter((e) => e.msg === "agent said").length;
  const saidBefore = said();
  try {
    phone.dial(`sip:${USER}@127.0.0.1:${port}`);
    await phone.waitFor("CALL_ESTABLISHED");
    await until(() => said() > saidBefore, "the greeting played to its end", 20_000);
    phone.hangUp();
    await phone.waitFor("CALL_CLOSED");
    await phone.stop();
    const heard = parseWav(readFileSync(phone.dumps().heard!));
    expect(levelDbfs(heard.samples)).toBeGreaterThan(-45);
  } finally {
    await phone.stop();
  }
}

const registrar = (run: string) =>
  KamailioRegistrar.start({ dir, port, user: USER, password: PASSWORD, maxExpiresS: 4 }, run);

describe("registration with Kamailio as the registrar", () => {
  it("registers with digest, refreshes, takes a call through it, re-registers after a restart, unregisters", async () => {
    kamailio = await registrar("run1");
    const logged: Entry[] = [];
    const bridge = await bridgeWith(PASSWORD, logged);
    try {
      const status = await until(
        () => bridge.sip!.registrations().find((r) => r.state === "registered"),
        "registered",
      );
      // Kamailio granted 4 s of the 60 asked: refreshed every 2 s.
      expect(status).toMatchObject({ aor: `sip:${USER}@127.0.0.1`, expiresS: 4 });
      await until(() => kamailio!.lines("REG saved").length >= 3, "two refreshes", 15_000);
      expect(kamailio.lines("REG challenge").length).toBeGreaterThanOrEqual(1);
      const ready = (await (await fetch(`${bridge.url}/readyz`)).json()) as object;
      expect(ready).toMatchObject({
        sip: { registrations: [{ aor: `sip:${USER}@127.0.0.1`, state: "registered" }] },
      });
      const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
      expect(metrics).toContain(
        `voice_bridge_sip_registration_up{aor="sip:${USER}@127.0.0.1",state="registered"} 1`,
      );

      // The console shows the registration and its state.
      const browser = await launchChromium();
      try {
        const { page, errors } = await openConsole(browser, bridge.entrances.console!);
        const trunk = page.locator("#trunk-list li");
        await expect.poll(() => trunk.getAttribute("data-state")).toBe("registered");
        expect(await trunk.textContent()).toContain(`${USER}@127.0.0.1`);
        expect(await page.locator("#trunks").isVisible()).toBe(true);
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }

      await callThroughRegistrar(logged);
      expect(kamailio.lines("CALL to")).toHaveLength(1);
      const answered = logged.filter((e) => e.msg === "sip: call answered");
      expect(answered).toHaveLength(1);
      expect(answered[0]!.to).toBe(USER);

      // Kamailio restarted: its bindings (in memory) and its nonces are gone.
      await kamailio.stop();
      kamailio = await registrar("run2");
      // The bridge's next refresh may reach the new Kamailio before this line runs: what shows the
      // restart was handled is a fresh challenge (the old nonces are gone), then a saved binding.
      await until(() => kamailio!.lines("REG saved").length >= 1, "a new registration", 45_000);
      expect(kamailio.lines("REG challenge").length).toBeGreaterThanOrEqual(1);
      await callThroughRegistrar(logged);
      expect(kamailio.lines("CALL to")).toHaveLength(1);
    } finally {
      await bridge.close(0);
    }
    // Closing unregisters: a REGISTER with Expires 0.
    await until(
      () => kamailio!.lines("REG saved").some((l) => l.includes("expires 0")),
      "the unregistration",
      5000,
    );
  }, 180_000);

  it("a wrong password: failed, said once, retried with backoff", async () => {
    kamailio ??= await registrar("run3");
    const before = kamailio.lines("REG challenge").length;
    const logged: Entry[] = [];
    const bridge = await bridgeWith("not-the-password", logged);
    try {
      const status = await until(
        () => bridge.sip!.registrations().find((r) => r.state === "failed"),
        "the failure",
      );
      expect(status.detail).toMatch(/refused the user name or password.*retrying in 5 s/);
      // The first retry comes after 5 s; the error is not said again.
      await until(() => kamailio!.lines("REG challenge").length - before >= 4, "a retry", 20_000);
      const errors = logged.filter((e) => e.msg.startsWith("sip: registration failed"));
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toMatch(/password/);
      expect(errors[0]!.level).toBe(50);
    } finally {
      await bridge.close(0);
    }
  }, 60_000);

  it("over TCP: the binding says transport=tcp and the registrar's INVITE comes over TCP to the agent", async () => {
    kamailio ??= await registrar("run4");
    const saved = kamailio.lines("REG saved").length;
    const logged: Entry[] = [];
    const bridge = await bridgeWith(PASSWORD, logged, "tcp");
    try {
      await until(() => bridge.sip!.registrations().find((r) => r.state === "registered"), "registered");
      const line = await until(() => kamailio!.lines("REG saved").slice(saved)[0], "the binding");
      expect(line).toMatch(/transport=tcp/);
      await callThroughRegistrar(logged);
      const answered = logged.filter((e) => e.msg === "sip: call answered");
      expect(answered).toHaveLength(1);
      expect(answered[0]).toMatchObject({ to: USER, via: "TCP" });
    } finally {
      await bridge.close(0);
    }
  }, 90_000);
});
