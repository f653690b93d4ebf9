// `voice-bridge call` as a module: real WAV files in (espeak-ng speech), a real call to the
// real routes, the agent's audio out as a WAV file that sox reads back, the printed report.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CallTransport } from "../../../bridges/transport.ts";
import { mulawDecode, mulawEncode } from "../../../codecs/g711.ts";
import { levelDbfs } from "../../../codecs/pcm.ts";
import { encodeWav, parseWav } from "../../../codecs/wav.ts";
import { parseDtmf, runCallCommand } from "../../../tools/twilio-sim/command.ts";
import { type Rig, startRig, tone } from "../../bridges/twilio/helpers.ts";

let rig: Rig | undefined;
const dir = mkdtempSync(join(tmpdir(), "vb-call-"));
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe("voice-bridge call (command module)", () => {
  it("parses --dtmf lists and rejects malformed ones", () => {
    expect(parseDtmf("1@4.5, #@6,a@0.02")).toEqual([
      { digit: "1", atMs: 4500 },
      { digit: "#", atMs: 6000 },
      { digit: "A", atMs: 20 },
    ]);
    expect(() => parseDtmf("1@x")).toThrow(/DIGIT@SECONDS/);
    expect(() => parseDtmf("12@1")).toThrow(/DIGIT@SECONDS/);
  });

  it("calls with a spoken turn, writes the agent's audio and prints transcript and timings", async () => {
    const say = join(dir, "book.wav");
    const espeak = spawnSync("espeak-ng", ["-w", say, "I would like to book a table"]);
    expect(espeak.status).toBe(0);
    const reply = tone(400, 500);
    const digits: string[] = [];
    let transport: CallTransport | undefined;
    rig = await startRig({
      attach: false,
      onCall(call) {
        transport = call.transport;
        let speech = 0;
        let silence = 0;
        call.transport.attach({
          audio(f) {
            if (levelDbfs(f) > -40) {
              speech++;
              silence = 0;
            } else if (speech > 0 && ++silence === 20) {
              speech = 0;
              call.transport.play(reply);
            }
          },
          dtmf: (d) => digits.push(d),
          played() {},
          ended() {},
        });
      },
      routes: (http) =>
        http.get("/calls/:id", async () => ({
          turns: [
            { role: "user", text: "i would like to book a table" },
            {
              role: "assistant",
              text: "For how many people?",
              interrupted: true,
              heard: "For how",
              metrics: { asrMs: 120, ttftMs: 300.25 },
            },
          ],
        })),
    });
    const out = join(dir, "agent.wav");
    let printed = "";
    const code = await runCallCommand({
      url: rig.base,
      say: [say],
      out,
      dtmf: "9@0.1",
      maxSeconds: 20,
      timing: { noReplyMs: 500, hangUpAfterMs: 300 },
      print: (t) => {
        printed += t;
      },
    });
    expect(code).toBe(0);
    expect(digits).toEqual(["9"]);
    expect(transport!.playedMs()).toBe(400);

    // sox reads the file back as 8 kHz mono 16-bit.
    const info = spawnSync("sox", ["--i", out], { encoding: "utf8" });
    expect(info.status).toBe(0);
    expect(info.stdout).toMatch(/Channels\s*:\s*1/);
    expect(info.stdout).toMatch(/Sample Rate\s*:\s*8000/);
    const agent = parseWav(new Uint8Array(readFileSync(out))).samples;
    const heard = mulawDecode(mulawEncode(reply));
    let at = -1;
    for (let i = 0; i + heard.length <= agent.length && at < 0; i++)
      if (agent[i + 1] === heard[1] && agent.subarray(i, i + heard.length).every((v, j) => v === heard[j]))
        at = i;
    expect(at).toBeGreaterThan(0);

    expect(printed).toContain("Transcript (from the bridge):");
    expect(printed).toContain("caller: i would like to book a table");
    expect(printed).toContain('agent:  For how many people?  [interrupted; heard: "For how"]');
    expect(printed).toContain("asrMs=120 ttftMs=300.3");
    expect(printed).toMatch(/turn 1\s+say book\.wav\s+[\d.]+–[\d.]+ s\s+voice-to-voice \d+ ms/);
    expect(printed).toMatch(/voice-to-voice: median \d+ ms/);
    expect(printed).toContain("ended by caller");
  });

  it("writes both channels with --both and says why a missing WAV fails", async () => {
    rig = await startRig({
      attach: false,
      onCall(call) {
        call.transport.attach({ audio() {}, dtmf() {}, played() {}, ended() {} });
        call.transport.play(tone(300, 700));
      },
    });
    const wav = join(dir, "caller.wav");
    writeFileSync(wav, encodeWav(tone(500, 300, 8000, 16000), 16000));
    const out = join(dir, "both.wav");
    await runCallCommand({
      url: rig.base,
      wav,
      out,
      both: true,
      maxSeconds: 5,
      timing: { noReplyMs: 300 },
      print: () => {},
    });
    const parsed = parseWav(new Uint8Array(readFileSync(out)));
    expect(parsed.channels).toBe(2);
    expect(parsed.sampleRate).toBe(8000);
    await expect(
      runCallCommand({ url: rig.base, wav: join(dir, "nope.wav"), print: () => {} }),
    ).rejects.toThrow(/nope\.wav: .*ENOENT/);
  });
});

process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
