// The deployment image, built and run for real (podman; test/deploy/podman.ts says how): the
// bridge in it, with its embedded local service, answers a simulated Twilio call and a real SIP
// phone (baresip), reports healthy, and on SIGTERM drains as deployed: OPTIONS probes and new calls
// get 503, the call in progress carries on to its end, then the container exits 0. The image is the
// slim one the Dockerfile's last stage makes: at most 400 MB, nothing in it that builds or installs.
// Words: none are checked; the agent's greeting is heard as audio.
import { createSocket } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { levelDbfs } from "../../codecs/pcm.ts";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { Baresip } from "../helpers/baresip.ts";
import { freePort } from "../helpers/free-port.ts";
import { until } from "../helpers/until.ts";
import {
  buildImage,
  ensureBaseImage,
  IMAGE,
  logs,
  podman,
  podmanStatus,
  remove,
  runImage,
} from "./podman.ts";

const TOKEN = "container-test-token";
const BRIDGE_TOKEN = "container-test-bridge-token";
let dir: string;
let name: string;
let httpPort: number;
let sipPort: number;

/**
 * Waits on the container, polling every 250 ms (each look runs podman), and fails with the end of
 * its log: the reason is in there.
 */
async function untilContainer(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 90_000,
): Promise<void> {
  try {
    await until(check, what, timeoutMs, 250);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${(await logs(name)).slice(-4000)}`);
  }
}

/** Sends one SIP OPTIONS over UDP and returns the response's status code. */
async function optionsStatus(port: number): Promise<number> {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  const local = s.address().port;
  const branch = `z9hG4bK${Math.random().toString(36).slice(2)}`;
  const msg = [
    `OPTIONS sip:127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=${branch};rport`,
    `From: <sip:probe@127.0.0.1:${local}>;tag=${branch}`,
    `To: <sip:127.0.0.1:${port}>`,
    `Call-ID: ${branch}@probe`,
    "CSeq: 1 OPTIONS",
    "Max-Forwards: 70",
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to OPTIONS on ${port}`)), 5000);
      s.on("message", (m) => {
        const code = Number(/^SIP\/2\.0 (\d{3})/.exec(m.toString())?.[1]);
        if (code >= 200) {
          clearTimeout(timer);
          resolve(code);
        }
      });
      s.send(msg, port, "127.0.0.1");
    });
  } finally {
    s.close();
  }
}

/** A caller's WAV at 8 kHz: `seconds` of quiet line noise (baresip hangs up when it ends). */
function callerWav(seconds: number): string {
  const pcm = new Int16Array(8000 * seconds);
  for (let i = 0; i < pcm.length; i++) pcm[i] = ((i * 7919) % 21) - 10;
  const file = join(dir, `caller-${seconds}s.wav`);
  writeFileSync(file, encodeWav(pcm, 8000));
  return file;
}

function heardDbfs(b: Baresip): number {
  const heard = b.dumps().heard;
  if (!heard) return Number.NEGATIVE_INFINITY;
  return levelDbfs(parseWav(readFileSync(heard)).samples);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-container-"));
  await ensureBaseImage();
  await buildImage();
  httpPort = await freePort();
  sipPort = await freePort();
  name = `vb-test-${process.pid}`;
  await remove(name);
  await runImage(name, {
    HOST: "127.0.0.1",
    PORT: String(httpPort),
    SIP_HOST: "127.0.0.1",
    SIP_PORT: String(sipPort),
    RTP_PORTS: "34000-34099",
    TWILIO_AUTH_TOKEN: TOKEN,
    BRIDGE_TOKEN: BRIDGE_TOKEN,
    AGENT_GREETING: "Thanks for calling. How can I help?",
  });
  await untilContainer(
    async () => podmanStatus(["healthcheck", "run", name]) === 0,
    "the container's health check",
  );
}, 30 * 60_000);

afterAll(async () => {
  if (name) await remove(name);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the deployment image (podman)", () => {
  it("runs as a non-root user, serves the console, and answers a simulated Twilio call with the greeting", async () => {
    const user = (await podman(["exec", name, "id", "-un"])).trim();
    expect(user).toBe("voicebridge");
    const call = await simulateCall({
      url: `http://127.0.0.1:${httpPort}`,
      authToken: TOKEN,
      caller: { samples: new Int16Array(8000 * 6), rate: 8000 },
      maxSeconds: 6,
      fetchTranscript: false,
    });
    expect(call.mediaReceived).toBeGreaterThan(0);
    expect(levelDbfs(call.agentAudio)).toBeGreaterThan(-40);
    // The console is in the image and served (on by default with the embedded local service).
    // Closed by default: the console asks for the bridge's token.
    expect((await fetch(`http://127.0.0.1:${httpPort}/`)).status).toBe(401);
    const page = await fetch(`http://127.0.0.1:${httpPort}/`, {
      headers: { authorization: `Bearer ${BRIDGE_TOKEN}` },
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Call the agent");
  }, 60_000);

  it("is slim: at most 400 MB, with no compiler, headers or package manager in it", async () => {
    const bytes = Number((await podman(["image", "inspect", IMAGE, "--format", "{{.Size}}"])).trim());
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(400_000_000);
    const found = await podman([
      "exec",
      name,
      "bash",
      "-c",
      "for p in cc gcc make apt-get dpkg npm ffmpeg node; do command -v $p; done; " +
        "for d in /usr/include /usr/lib/gcc /var/lib/dpkg; do [ ! -e $d ] || echo $d; done; true",
    ]);
    // Node and ffmpeg are there (what runs); what builds or installs is not.
    expect(found.trim().split("\n")).toEqual(["/usr/local/bin/ffmpeg", "/app/.tools/node/bin/node"]);
  });

  it("answers a SIP phone (baresip, PCMU) with the greeting", async () => {
    const phone = await Baresip.start({ codec: "pcmu", wav: callerWav(5) });
    try {
      phone.dial(`sip:agent@127.0.0.1:${sipPort}`);
      await phone.waitFor("CALL_ESTABLISHED");
      await phone.waitFor("CALL_CLOSED", 30_000);
    } finally {
      await phone.stop();
    }
    expect(heardDbfs(phone)).toBeGreaterThan(-40);
  }, 60_000);

  it("drains on SIGTERM: probes get 503, the call in progress ends normally, then it exits 0", async () => {
    expect(await optionsStatus(sipPort)).toBe(200);
    const phone = await Baresip.start({ codec: "pcmu", wav: callerWav(8) });
    try {
      phone.dial(`sip:agent@127.0.0.1:${sipPort}`);
      await phone.waitFor("CALL_ESTABLISHED");
      await podman(["kill", "--signal", "TERM", name]);
      await untilContainer(
        async () => (await optionsStatus(sipPort)) === 503,
        "OPTIONS answered 503 while draining",
        10_000,
      );
      const readyz = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
      expect(readyz.status).toBe(503);
      // The call is not cut: it lasts until the caller's audio ends and the caller hangs up.
      await phone.waitFor("CALL_CLOSED", 30_000);
    } finally {
      await phone.stop();
    }
    const code = (await podman(["wait", name], 60_000)).trim();
    expect(code).toBe("0");
    const ends = (await logs(name))
      .split("\n")
      .filter((l) => l.includes('"msg":"call ended"'))
      .map((l) => (JSON.parse(l) as { reason: string }).reason);
    // Every call ended as a call ends (the caller hung up, the stream stopped), none by the drain.
    expect(ends.length).toBeGreaterThanOrEqual(3);
    expect(ends.filter((r) => /shut/.test(r))).toEqual([]);
  }, 120_000);
});
