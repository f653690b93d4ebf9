// A real phone (baresip, headless) calls the server: PCMU and Opus calls connect, its RTP reaches
// the port we answered, and either side can hang up. Media is the test double (bridges/sip/rtp
// lands separately), so this checks signalling with a real UA, not audio content.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../helpers/free-port.ts";
import { until } from "../../helpers/until.ts";
import { type ServerRig, startServerRig } from "./server-rig.ts";
import type { TestSipTransport } from "./test-media.ts";

let rig: ServerRig | undefined;
afterEach(async () => {
  await rig?.server.close();
  rig = undefined;
});

/** A tone WAV of `seconds` (baresip hangs up when its source file ends). */
function tone(dir: string, seconds: number, rate: number): string {
  const n = seconds * rate;
  const wav = Buffer.alloc(44 + 2 * n);
  wav.write("RIFF", 0);
  wav.writeUInt32LE(36 + 2 * n, 4);
  wav.write("WAVEfmt ", 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write("data", 36);
  wav.writeUInt32LE(2 * n, 40);
  for (let i = 0; i < n; i++)
    wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + 2 * i);
  const file = join(dir, "in.wav");
  writeFileSync(file, wav);
  return file;
}

async function baresipCall(
  target: string,
  codec: "pcmu" | "opus",
  seconds: number,
  quitAfterS: number,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "baresip-"));
  const rate = codec === "opus" ? 48000 : 8000;
  const wav = tone(dir, seconds, rate);
  writeFileSync(
    join(dir, "config"),
    [
      "poll_method epoll",
      `sip_listen 127.0.0.1:${await freePort()}`,
      "module_path /usr/lib/baresip/modules",
      "module stdio.so",
      "module g711.so",
      "module opus.so",
      "module aufile.so",
      "module_tmp account.so",
      "module_app menu.so",
      "audio_player aufile,/dev/null",
      `audio_source aufile,${wav}`,
      `ausrc_srate ${rate}`,
      "ausrc_channels 1",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "accounts"),
    `<sip:caller@127.0.0.1>;regint=0;audio_codecs=${codec === "opus" ? "opus/48000/2" : "pcmu"}\n`,
  );
  const child = spawn("baresip", ["-f", dir, "-e", `/dial sip:agent@${target}`, "-t", String(quitAfterS)], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d: Buffer) => {
    log += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    log += d.toString();
  });
  const kill = setTimeout(() => child.kill("SIGKILL"), (quitAfterS + 30) * 1000);
  await new Promise((resolve) => child.on("close", resolve));
  clearTimeout(kill);
  return log;
}

describe("baresip calls the server", () => {
  it("a PCMU call connects, its RTP reaches our port, and its hang-up ends the call", async () => {
    rig = await startServerRig();
    const log = await baresipCall(rig.target, "pcmu", 2, 8);
    expect(log, log).toContain("Call established");
    const [t] = rig.made;
    expect(t?.info).toMatchObject({ transport: "sip", from: "caller", to: "agent" });
    expect(t?.medias[0]?.codec).toMatchObject({ name: "pcmu", payloadType: 0 });
    expect(t?.endpoint.packets).toBeGreaterThan(50);
    expect(t?.endReasons).toEqual(["caller hung up"]);
    await expect.poll(() => rig!.pool.inUse).toBe(0);
    expect(rig.server.stats.dialogs).toBe(0);
  }, 60_000);

  it("an Opus call connects as opus/48000/2, and our BYE ends it on the phone", async () => {
    let hungUp: Promise<void> | undefined;
    rig = await startServerRig({
      onCall: (t: TestSipTransport) => {
        // Hang up once the phone's audio is flowing.
        hungUp = until(() => t.endpoint.packets >= 25, "the phone's audio").then(() =>
          t.hangUp("agent said goodbye"),
        );
      },
    });
    const log = await baresipCall(rig.target, "opus", 20, 8);
    expect(log, log).toContain("Call established");
    expect(rig.made[0]?.medias[0]?.codec).toMatchObject({ name: "opus", clockRate: 48000 });
    expect(hungUp).toBeDefined();
    await hungUp;
    // The phone saw the call end (baresip reports a received BYE as "session closed") well
    // before its 20 s file ran out.
    expect(log).toMatch(/session closed/);
    expect(log).not.toContain("audio error (0,end of file)");
    expect(rig.server.stats.dialogs).toBe(0);
    await expect.poll(() => rig!.pool.inUse).toBe(0);
  }, 60_000);
});
