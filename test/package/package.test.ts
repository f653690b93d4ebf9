// The package as a TypeScript developer gets it: scripts/pack.sh makes the tarball, npm installs it
// into an empty project (no workspace link: a real `npm install ./voice-bridge-*.tgz`), tsc checks a
// file using every exported function under `strict` against the installed .d.ts (and refuses a
// wrong one), and the file runs from the installed JS: a simulated Twilio call in which the model
// calls its TypeScript tool and the result is spoken. Each example in examples/ then runs from the
// same installed package and answers a call (the Discord persona in the fake Discord); the outbound
// reminder places real SIP calls through Kamailio to baresip callees (a person, a voicemail) and
// SIPp (busy).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseWav } from "../../codecs/wav.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { SQLITE_FILE, SqliteCallStore } from "../../src/records/store/sqlite/store.ts";
import { CallRejectedError, simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { startFakeDiscord } from "../fake-discord/index.ts";
import { until } from "../helpers/agents-fixture.ts";
import { Baresip } from "../helpers/baresip.ts";
import { freePort } from "../helpers/free-port.ts";
import { firstLoudMs } from "../helpers/speech.ts";
import { CALLEE_RATE, personWav, voicemailWav } from "../outbound/callees.ts";
import { KamailioTrunk } from "../outbound/kamailio-trunk.ts";
import { startBusyCallee } from "../outbound/sipp-busy.ts";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const NPM = join(dirname(process.execPath), "npm");
let dir: string;
let app: string;
const children = new Set<ChildProcess>();

/** The scripted chat engine: keypad digits are an order number for lookup_order. */
const SCRIPTED = {
  name: "package test line",
  greeting: "Hello.",
  fallback: "Type your order number.",
  rules: [
    {
      intent: "order",
      when: ["keypad: \\d"],
      slots: { order_id: "keypad: ([\\d ]+)" },
      reply: "Let me check.",
      tool: { name: "lookup_order", arguments: { order_id: "{order_id}" } },
      without_tool: "I cannot look orders up here.",
      after_tool: "Order {order_id} is {result.status}, {result.eta}.",
    },
  ],
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-package-"));
  const packed = await run("bash", [join(ROOT, "scripts/pack.sh"), join(dir, "pack")], { cwd: ROOT });
  const tarball = packed.stdout.trim().split("\n").at(-1)!;
  app = join(dir, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "vb-app", private: true, type: "module" }));
  // The ONNX runtime's own install step downloads GPU builds; the bridge needs only its CPU one.
  writeFileSync(join(app, ".npmrc"), "onnxruntime-node-install=skip\n");
  await run(NPM, ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], {
    cwd: app,
    maxBuffer: 64 << 20,
  });
  copyFileSync(join(import.meta.dirname, "app/smoke.ts"), join(app, "smoke.ts"));
  for (const example of readdirSync(join(ROOT, "examples"), { withFileTypes: true })) {
    if (!example.isDirectory()) continue;
    for (const f of readdirSync(join(ROOT, "examples", example.name)))
      if (f.endsWith(".ts")) copyFileSync(join(ROOT, "examples", example.name, f), join(app, f));
  }
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023",
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        noEmit: true,
        // The examples' programs import their agents' modules (./hotline-agent.ts).
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: ["node"],
        // Node's types from the checkout: the app installs nothing but the package.
        typeRoots: [join(ROOT, "node_modules/@types")],
      },
      include: ["*.ts"],
    }),
  );
  writeFileSync(join(dir, "scripted.yaml"), stringify(SCRIPTED));
}, 600_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs one of the app's files on the installed package; resolves with the URL it prints. */
function start(file: string, env: Record<string, string> = {}, args: string[] = []): Promise<Launched> {
  const argv = [
    process.execPath,
    "--experimental-strip-types",
    "--disable-warning=ExperimentalWarning",
    file,
    ...args,
  ];
  return launch(argv, env, / ready: (http:\/\/\S+)/);
}

const TEST_TOKEN = "package-test-token-0123456789";

interface Launched {
  url: string;
  /** Its stdout lines so far. */
  out: string[];
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
}

/** Runs `argv` in the app's directory; resolves with the URL in the first stdout line matching `ready`. */
async function launch(argv: string[], env: Record<string, string>, ready: RegExp): Promise<Launched> {
  const file = argv.find((a) => a.endsWith(".ts")) ?? argv.at(-1)!;
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(SVC_|DISCORD_|VOICE_BRIDGE_|SIP_|PORT$|HOST$)/.test(k)),
  );
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: app,
    env: {
      ...base,
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: join(dir, `data-${file}`),
      SVC_SCRIPTED_AGENT: join(dir, "scripted.yaml"),
      SVC_SCRIPTED_PACE_MS: "0",
      LOG_LEVEL: process.env.E2E_LOG ?? "warn",
      LOG_FORMAT: "json",
      // Closed by default: the test reads records with the token, as a program would.
      BRIDGE_TOKEN: TEST_TOKEN,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const out: string[] = [];
  let err = "";
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", resolveExit));
  return new Promise((resolveUrl, reject) => {
    let pending = "";
    child.stdout!.on("data", (d: Buffer) => {
      pending += d.toString();
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        out.push(line);
        const m = ready.exec(line);
        if (m) resolveUrl({ url: m[1]!, out, exited });
      }
    });
    child.once("exit", (code) => reject(new Error(`${file} exited ${code}: ${err}${out.join("\n")}`)));
  });
}

const record = (r: { transcript?: unknown }) => r.transcript as CallRecord;
const assistant = (r: CallRecord) => r.turns.filter((t) => t.role === "assistant");
/** What the agent said in a turn (its greeting may be cut short by the caller's keys: `text` is what was heard). */
const said = (t: CallRecord["turns"][number] | undefined) =>
  t?.role === "assistant" ? t.generated : undefined;

describe("the npm package, installed into an empty project", () => {
  it("type-checks a file using every export under strict, and refuses a wrong one", async () => {
    const tsc = join(ROOT, "node_modules/.bin/tsc");
    await expect(run(tsc, ["-p", app], { cwd: app })).resolves.toBeDefined();
    // The types are real: a tool's arguments are what its zod schema says.
    writeFileSync(
      join(app, "wrong.ts"),
      `import { tool, z } from "voice-bridge";\n` +
        `tool({ name: "t", description: "d", parameters: z.object({ n: z.number() }), execute: ({ n }) => n.toUpperCase() });\n`,
    );
    const refused = await run(tsc, ["-p", app], { cwd: app }).catch((e: { stdout: string }) => e.stdout);
    expect(refused).toMatch(/wrong\.ts.*toUpperCase/s);
    rmSync(join(app, "wrong.ts"));
  }, 120_000);

  it("ships the users' docs, not the developers' notes (docs/dev)", () => {
    const docs = readdirSync(join(app, "node_modules/voice-bridge/docs"));
    expect(docs).toContain("benchmarks.md");
    expect(docs).not.toContain("dev");
  });

  it("runs: the model calls the TypeScript tool, which reads the call's variables, and its result is spoken", async () => {
    const { url, out } = await start("smoke.ts");
    expect(out.join("\n")).toMatch(/refused: .*agent\.maxCallSeconds/);
    expect(out).toContain("dial refused: 400 via");
    const r = await simulateCall({
      url,
      bridgeToken: TEST_TOKEN,
      from: "+15550009999",
      dtmf: [
        { digit: "7", atMs: 2000 },
        { digit: "#", atMs: 2050 },
      ],
      hangUpAfterMs: 2500,
      maxSeconds: 20,
    });
    const [greeting, answer] = assistant(record(r));
    expect(greeting?.role === "assistant" && greeting.generated).toBe(
      "Smoke line for customer of +15550009999.",
    );
    expect(answer).toMatchObject({ tools: ["lookup_order"] });
    const toolEvent = record(r).events.find((e) => e.type === "assistant" && e.toolCalls.length);
    expect(toolEvent?.type === "assistant" && JSON.parse(toolEvent.toolCalls[0]!.arguments)).toEqual({
      order_id: "7",
    });
    expect(answer?.role === "assistant" && answer.generated).toContain(
      "Order 7 is ready for customer of +15550009999, call CA.",
    );
    // The agent's answer was heard: its audio reached the caller after the digits.
    expect(r.mediaReceivedMs.some((ms) => ms > 2500)).toBe(true);
    await until(() => out.some((l) => l.startsWith(`ended ${r.callSid} after`)), "onCallEnd");
    expect(out.some((l) => l.startsWith("tool turn: Let me check."))).toBe(true);
  }, 90_000);
  it("npx voice-bridge start: the CLI of the installed package runs the bridge and answers a call", async () => {
    const bin = join(app, "node_modules/.bin/voice-bridge");
    const { url } = await launch(
      [bin, "start"],
      { LOG_LEVEL: "info" },
      /"url":"(http:\/\/[\d.:]+)"[^\n]*bridge listening/,
    );
    const r = await simulateCall({ url, bridgeToken: TEST_TOKEN, hangUpAfterMs: 1000, maxSeconds: 10 });
    expect(said(assistant(record(r))[0])).toBe("Hello.");
  }, 60_000);
});

describe("the examples, on the installed package", () => {
  it("hotline: the order lookup reads the caller's variables (Ada's order, not Grace's)", async () => {
    const { url } = await start("hotline.ts");
    const call = (from: string, digits: string) =>
      simulateCall({
        url,
        bridgeToken: TEST_TOKEN,
        from,
        dtmf: [...digits, "#"].map((digit, i) => ({ digit, atMs: 4000 + i * 100 })),
        hangUpAfterMs: 2500,
        maxSeconds: 20,
      });
    // Two callers at once: each call's variables are its own.
    const [ada, grace] = (
      await Promise.all([call("+15550001234", "4217"), call("+15550005678", "4217")])
    ).map(record) as [CallRecord, CallRecord];
    expect(said(assistant(ada)[0])).toBe("Thanks for calling Acme Bikes, Ada. How can I help?");
    expect(assistant(ada)[1]?.role === "assistant" && assistant(ada)[1]?.generated).toContain(
      "Order 4217 is shipped, Thursday.",
    );
    expect(assistant(grace)[1]?.role === "assistant" && assistant(grace)[1]?.generated).toContain(
      "Order 4217 is not one of your orders",
    );
  }, 90_000);

  it("router: onCallStart hands each number to its agent, and refuses a blocked caller", async () => {
    const { url, out } = await start("router.ts");
    const to = (number: string) =>
      simulateCall({ url, bridgeToken: TEST_TOKEN, to: number, hangUpAfterMs: 1000, maxSeconds: 10 });
    // The calls at once: each is routed on its own number.
    const [sales, support, other] = (
      await Promise.all([to("+15552000001"), to("+15552000002"), to("+15559999999")])
    ).map(record) as [CallRecord, CallRecord, CallRecord];
    expect(sales.agent).toBe("sales");
    expect(said(assistant(sales)[0])).toBe("Hi, you've reached the sales line. What can I offer you today?");
    expect(support.agent).toBe("support");
    expect(out.some((l) => l === `call ${support.callId} to +15552000002: agent support`)).toBe(true);
    expect(other.agent).toBe("default");
    await expect(
      simulateCall({ url, bridgeToken: TEST_TOKEN, from: "+15550000666", to: "+15552000001", maxSeconds: 5 }),
    ).rejects.toBeInstanceOf(CallRejectedError);
  }, 90_000);

  it("discord persona: Nova greets a member who asks the bot to join (fake Discord)", async () => {
    const token = "MTAxMjM0.example.bot-token";
    const member = { userId: "400000000000000021", name: "Alice" };
    const fake = await startFakeDiscord({ token, members: [member] });
    try {
      const { url, out } = await start("persona.ts", {
        DISCORD_TOKEN: token,
        DISCORD_API_BASE: fake.restApi,
        NODE_EXTRA_CA_CERTS: fake.caCertPath,
      });
      fake.memberJoinsVoice(member.userId);
      await fake.waitForRest((r) => r.method === "PUT" && r.path.endsWith("/commands"));
      fake.interaction("join", { userId: member.userId });
      await fake.daveJoined(member.userId);
      const id = `discord-${fake.guildId}-${fake.voiceChannelId}-1`;
      let conversation: CallRecord | undefined;
      for (let i = 0; i < 300 && !conversation?.turns.length; i++) {
        const res = await fetch(`${url}/calls/${id}`, {
          headers: { authorization: `Bearer ${TEST_TOKEN}` },
        });
        conversation = res.ok ? ((await res.json()) as CallRecord) : undefined;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(conversation?.agent).toBe("nova");
      await until(
        () => out.includes("Nova: Navigator Nova on deck. Who's ready for an adventure?"),
        "Nova's greeting",
      );
      expect(
        fake
          .member(member.userId)
          .heardFrames()
          .some((fr) => !fr.silent),
      ).toBe(true);
    } finally {
      await fake.close();
    }
  }, 120_000);

  it("outbound reminder: calls each patient over SIP; a person hears the reminder, a voicemail the message after its beep", async () => {
    const calls = join(dir, "reminder-calls");
    mkdirSync(calls);
    const personPlays = personWav(calls);
    const voicemailPlays = voicemailWav(calls);
    const [person, voicemail] = await Promise.all([
      Baresip.start({ codec: "pcmu", wav: personPlays.file, user: "ada", accountParams: ";answermode=auto" }),
      Baresip.start({
        codec: "pcmu",
        wav: voicemailPlays.file,
        user: "morgan",
        accountParams: ";answermode=auto",
      }),
    ]);
    const busy = await startBusyCallee(calls);
    const trunkPort = await freePort();
    const trunk = await KamailioTrunk.start({
      dir: calls,
      port: trunkPort,
      user: "dental",
      password: "trunk-secret",
      callees: {
        "15550101": { user: "ada", port: person.sipPort },
        "15550102": { user: "morgan", port: voicemail.sipPort },
        "15550103": { user: "busy", port: busy.port },
      },
    });
    try {
      const appointments = join(calls, "appointments.json");
      writeFileSync(
        appointments,
        JSON.stringify([
          { name: "Ada", time: "on Thursday at 3 pm", phone: "15550101" },
          { name: "Morgan", time: "tomorrow at 9 in the morning", phone: "1555 0102" },
          { name: "Linus", time: "on Friday at noon", phone: "15550103" },
        ]),
      );
      const dataDir = join(dir, "data-reminder.ts");
      const { out, exited } = await start(
        "reminder.ts",
        {
          SIP_HOST: "127.0.0.1",
          SIP_PORT: "0",
          RTP_PORTS: "36800-36899",
          SIP_CODECS: "pcmu",
          SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
          SIP_OUTBOUND_USER: "dental",
          SIP_OUTBOUND_PASSWORD: "trunk-secret",
          SIP_OUTBOUND_FROM: "+15557770000",
        },
        [appointments],
      );
      // It places the three calls (at the bridge's default pace: DialError's retryAfterS), then
      // exits once onCallEnd has heard each one end.
      expect(await exited).toBe(0);
      const ended = (name: string) => out.find((l) => l.includes(` for ${name}: `));
      expect(ended("Ada")).toMatch(/^reminder out-\w+ for Ada: human /);
      expect(ended("Morgan")).toMatch(/^reminder out-\w+ for Morgan: machine /);
      expect(ended("Linus")).toMatch(/^reminder out-\w+ for Linus: busy \(486 Busy Here\)/);
      expect(out.at(-1)).toBe("reminders done: 3 calls");
      expect(
        trunk.lines().filter((l) => /TRUNK INVITE \d+ from \+15557770000 authorized as dental/.test(l)),
      ).toHaveLength(3);

      // The records: each call's agent spoke with the appointment's variables.
      const store = await SqliteCallStore.open({
        path: join(dataDir, SQLITE_FILE),
        instance: "package-test-reader",
        onWriteError: () => {},
      });
      const recordOf = async (name: string) => {
        const id = /^reminder (out-\w+) /.exec(ended(name) ?? "")?.[1];
        return id ? store.get(id) : undefined;
      };
      const [ada, morgan] = [await recordOf("Ada"), await recordOf("Morgan")];
      await store.close();
      expect(ada).toMatchObject({ direction: "outbound", dialOutcome: "human", agent: "reminder" });
      expect(said(ada?.turns[0])).toMatch(/^Hello Ada, .*appointment on Thursday at 3 pm\./);
      expect(morgan).toMatchObject({ dialOutcome: "machine", amd: { result: "machine" } });
      expect(said(morgan?.turns[0])).toMatch(/^Hello Morgan, .*appointment tomorrow at 9 in the morning\./);

      // What the callees heard: Ada the agent after her "Hello?", Morgan's voicemail the message
      // after its beep.
      const heard = (b: Baresip) => parseWav(readFileSync(b.dumps().heard!)).samples;
      const agentAt = firstLoudMs(heard(person), CALLEE_RATE) ?? -1;
      expect(agentAt).toBeGreaterThan(personPlays.helloEndMs);
      const messageAt = firstLoudMs(heard(voicemail), CALLEE_RATE) ?? -1;
      expect(messageAt).toBeGreaterThan(voicemailPlays.beepEndMs - 100);
    } finally {
      busy.process.kill("SIGKILL");
      await Promise.all([person.stop(), voicemail.stop(), trunk.stop()]);
    }
  }, 150_000);
});
