// `npm run bench -- discord [--members M] [--channels C] [--seconds S] [--keep]`
// (C channels, 1 to 20, are C guilds of one fake Discord, each with its voice channel, its own voice
//  server and M members (default 3), all served by ONE bridge process: one bot, one 20 ms wake-up for
//  every channel's output. The figures are per channel and per member.)
//
// The Discord bot under load, everything on 127.0.0.1 and stopping by itself:
//   local service (`voice-bridge service --engines synthetic`)
//     ← bridge (`voice-bridge start`, DISCORD_API_BASE at the fake, NODE_EXTRA_CA_CERTS for its TLS)
//       ← the fake Discord in this process (test/fake-discord: REST, gateway, voice gateway, UDP,
//         a real DAVE session), with M simulated members in the guild's voice channel.
// Phase 1, the agent speaking: /join in every guild; while the long greeting (about 25 s) plays and
// nobody speaks, the bridge's CPU per channel-second of agent audio is `agent_out_cpu_us_per_s` (TTS
// Opus packets demuxed and handed to the sender, DAVE- and transport-encrypted, sent), measured from
// 8 s to 18 s into the greeting: a long-running bot's steady cost. The greeting's first seconds are
// the first audio this fresh process ever sends, while V8 still runs the per-packet code in its
// baseline tier and compiles it on its helper threads; that cost, from 1 s to 5 s, is reported
// apart as `agent_out_cold_cpu_us_per_s` (it is paid once per process, not per channel-second).
// Phase 2, members speaking: every member speaks without pause for S seconds; the agent answers
// only when called by a name nobody says (`discord.respondTo: mention`), so the bridge's CPU per
// member-second is the receive path (`cpu_us_per_speaking_user_s`: transport and DAVE decryption,
// Opus decode, VAD, the recognizer's upload), from 2 s after everyone started (the first 2 s, the
// receive path's first packets in this process, are `receive_cold_cpu_us_per_user_s`).
// CPU is the bridge's threads' run time from the scheduler (ns), not /proc's 10 ms ticks, which
// over these windows would be steps of 250–1,250 µs/s.
// Phase 3, a second bridge answering everyone, one member asks a question a few times:
// `voice_to_voice_ms_p50`, from the end of the member's speech to the agent's first packet heard.
// Also: `timer_20ms_floor_cpu_us_per_s`, the CPU of a bare Node process with one 20 ms interval timer
// (what any paced stream costs on this machine before it does any work), and
// `receive_floor_cpu_us_per_user_s`, a bare process that wakes every 20 ms, decodes every member's
// packet and runs Silero on their windows, and nothing else (what the receive path costs on this
// machine before any of the bridge's own work).
// Prints one JSON line.
import { type ChildProcess, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type FakeDiscord,
  type FakeGuild,
  type SimulatedMember,
  startFakeDiscord,
} from "../test/fake-discord/index.ts";
import { until } from "../test/helpers/until.ts";
import { numberArg } from "./lib/args.ts";
import {
  machineBusyUs,
  mainThreadSchedUs,
  mainThreadWakeups,
  processRunUs,
  spawnNode,
  stopProcess,
  waitForLine,
} from "./lib/calls-procs.ts";
import { espeakSpeech, percentile, round } from "./lib/measure.ts";

const arg = numberArg;

const MEMBERS = Math.round(arg("members", 3));
const CHANNELS = Math.round(arg("channels", 2));
if (CHANNELS < 1 || CHANNELS > 20) throw new Error(`--channels ${CHANNELS}: 1 to 20`);
const SECONDS = arg("seconds", 20);
const KEY = "bench-key";
const TOKEN = "MTAxMjM0.bench.bot-token";
/** agent_out's target: the 20 ms floor plus this per channel with few channels, or this alone with many. */
const TARGETS = {
  cpu_us_per_speaking_user_s: 6000,
  agent_out_over_floor: 1500,
  agent_out_many_channels: 2500,
};
const GREETING =
  "Hello everyone, and welcome to the voice channel. I am the assistant of this server. " +
  "I can answer questions about opening hours, where to find us, and the status of your orders. " +
  "Just ask me whenever you like, and I will do my best to help all of you. " +
  "We are open every day from nine in the morning until six in the evening, except on public holidays.";

const dir = mkdtempSync(join(tmpdir(), "bench-discord-"));
const children: ChildProcess[] = [];
const deadline = setTimeout(
  () => {
    process.stderr.write("bench discord: overall time limit reached, stopping\n");
    for (const c of children) c.kill("SIGKILL");
    process.exit(3);
  },
  (SECONDS + 240) * 1000,
);
deadline.unref();

/**
 * The floor under any per-packet path on this machine: CPU of a bare Node process whose only work
 * is a 20 ms interval timer (one voice stream's pace), µs per second. Both paths wake the loop at
 * least that often per channel or member, whatever they do when awake.
 */
function timerFloorUsPerS(): number {
  const script =
    "const t=setInterval(()=>{},20);const u0=process.cpuUsage();const t0=performance.now();" +
    "setTimeout(()=>{const u=process.cpuUsage(u0);clearInterval(t);" +
    "console.log((u.user+u.system)/((performance.now()-t0)/1000))},4000)";
  return Math.round(Number(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" })));
}

/**
 * The floor under the receive figure on this machine, µs per member-second: a bare process doing
 * only the 20 ms wake-up, libopus's decode and Silero's windows for `users` members
 * (bench/lib/discord-receive-floor.ts).
 */
function receiveFloorUsPerUserS(users: number): number {
  const script = join(import.meta.dirname, "lib", "discord-receive-floor.ts");
  return Number(execFileSync(process.execPath, [script, String(users), "6"], { encoding: "utf8" }));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lastHeard = (m: SimulatedMember) => m.heardFrames().findLast((f) => !f.silent)?.at ?? 0;
const quiet = (m: SimulatedMember, ms = 600) => lastHeard(m) < performance.now() - ms;
const voiced = (m: SimulatedMember) => m.heardFrames().filter((f) => !f.silent).length;
let nextId = 300_000_000_000_000_000n;
/** Members answer DAVE as real clients do, not at once. */
const DAVE_DELAY_MS = 300;

/** Each member's decoded frames, from the bridge's "member left" lines (JSON logs). */
function memberFrames(logPath: string): Map<string, number> {
  const out = new Map<string, number>();
  let text = "";
  try {
    text = readFileSync(logPath, "utf8");
  } catch {
    return out;
  }
  for (const line of text.split("\n")) {
    if (!line.includes('"member left"')) continue;
    const l = JSON.parse(line) as { member?: string; frames?: number };
    if (l.member) out.set(l.member, l.frames ?? 0);
  }
  return out;
}
const memberInfos = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ userId: String(++nextId), name: `${prefix}${i + 1}` }));

/** A guild whose members sit in its voice channel, and the bot joined by the first of them. */
async function channel(fake: FakeGuild, members: SimulatedMember[]): Promise<void> {
  for (const m of members) fake.memberJoinsVoice(m.userId);
  fake.interaction("join", { userId: members[0]!.userId });
  await Promise.all(members.map((m) => fake.daveJoined(m.userId)));
}

async function startBridge(
  name: string,
  svcUrl: string,
  apiBase: string,
  certPath: string,
  env: Record<string, string>,
): Promise<ChildProcess> {
  const log = join(dir, `${name}.log`);
  const flags = (process.env.BENCH_DISCORD_BRIDGE_FLAGS ?? "").split(" ").filter(Boolean);
  const bridge = spawnNode(
    [...flags, "app/cli.ts", "start"],
    {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_BASE_URL: svcUrl,
      SVC_API_KEY: KEY,
      SVC_LOCAL_DATA_DIR: join(dir, name),
      DISCORD_TOKEN: TOKEN,
      DISCORD_API_BASE: apiBase,
      NODE_EXTRA_CA_CERTS: certPath,
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      ...env,
    },
    log,
  );
  children.push(bridge);
  await waitForLine(log, /slash commands \/join and \/leave registered/, 60_000, bridge);
  return bridge;
}

/** The local service (synthetic engines) that both bridges use. */
async function startService(): Promise<{ svc: ChildProcess; svcUrl: string }> {
  const svcLog = join(dir, "service.log");
  const svc = spawnNode(
    ["app/cli.ts", "service", "--port", "0", "--engines", "synthetic", "--data-dir", join(dir, "svc")],
    { ...process.env, SVC_LOCAL_API_KEYS: KEY, LOG_LEVEL: "warn", LOG_FORMAT: "json" },
    svcLog,
  );
  children.push(svc);
  const svcUrl = (await waitForLine(svcLog, /listening on (http:\/\/\S+)/, 30_000, svc))[1]!;
  return { svc, svcUrl };
}

/** What the members say, 48 kHz, and how long its words last, ms. */
function question(): { phrase: Int16Array; voicedMs: number } {
  const phrase = espeakSpeech("What are your opening hours?", 48000);
  // Where the words end (espeak-ng leaves some silence after them): the end of speech for v2v.
  let last = phrase.length - 1;
  while (last > 0 && Math.abs(phrase[last]!) < 300) last--;
  return { phrase, voicedMs: (last / 48000) * 1000 };
}

/** Phases 1 and 2: C guilds of M members on one bridge, the agent answering nobody. */
interface Crowd {
  fake: FakeDiscord;
  guilds: FakeGuild[];
  members: SimulatedMember[][];
  bridge: ChildProcess;
}

async function startCrowd(svcUrl: string): Promise<Crowd> {
  const infos = Array.from({ length: CHANNELS }, (_, c) => memberInfos(MEMBERS, `c${c + 1}m`));
  const fake: FakeDiscord = await startFakeDiscord({
    token: TOKEN,
    members: infos[0]!,
    daveDelayMs: DAVE_DELAY_MS,
  });
  const guilds: FakeGuild[] = [fake];
  for (let c = 1; c < CHANNELS; c++) guilds.push(await fake.addGuild({ members: infos[c]! }));
  const members: SimulatedMember[][] = guilds.map((g, c) => infos[c]!.map((m) => g.member(m.userId)));
  const bridge = await startBridge("bridge", svcUrl, fake.restApi, fake.caCertPath, {
    AGENT_GREETING: GREETING,
    DISCORD_RESPOND_TO: "mention",
    DISCORD_AGENT_NAME: "zebedee",
  });
  return { fake, guilds, members, bridge };
}

/** The bridge's CPU over `ms`, µs per second of each of `units` (channels, members). */
async function cpuPerS(bridge: ChildProcess, ms: number, units: number): Promise<number> {
  const cpu0 = processRunUs(bridge.pid!);
  const t0 = performance.now();
  await sleep(ms);
  return (processRunUs(bridge.pid!) - cpu0) / (units * ((performance.now() - t0) / 1000));
}

/** What the bridge and the machine did over one measuring window. */
interface Window {
  /** Its length, s. */
  s: number;
  /** The bridge's CPU, µs: all its threads, then its event loop's thread alone. */
  cpu: number;
  loop: number;
  /** Its event loop's thread's wake-ups. */
  wakeups: number;
  /** CPU the rest of the machine used, µs. */
  others: number;
}

async function measureWindow(bridge: ChildProcess, ms: number): Promise<Window> {
  const pid = bridge.pid!;
  const t0 = performance.now();
  const cpu0 = processRunUs(pid);
  const loop0 = mainThreadSchedUs(pid).runUs;
  const wake0 = mainThreadWakeups(pid);
  const machine0 = machineBusyUs();
  await sleep(ms);
  const s = (performance.now() - t0) / 1000;
  const cpu = processRunUs(pid) - cpu0;
  const loop = mainThreadSchedUs(pid).runUs - loop0;
  const wakeups = mainThreadWakeups(pid) - wake0;
  const others = machineBusyUs() - machine0 - cpu;
  return { s, cpu, loop, wakeups, others };
}

/** Phase 1: the agent's greeting in every channel, nobody else speaking. */
interface AgentOut {
  /** µs per channel-second from 1 s to 5 s into the greeting (see the header). */
  cold: number;
  /** 8 s to 18 s into the greeting. */
  window: Window;
  /** The agent was still speaking in every channel at the window's end. */
  stillSpeaking: boolean;
  clearFrames: number;
}

async function agentSpeaking({ guilds, members, bridge }: Crowd): Promise<AgentOut> {
  await Promise.all(guilds.map((g, c) => channel(g, members[c]!)));
  const listeners = members.map((ms) => ms[0]!);
  await until(() => listeners.every((m) => voiced(m) >= 25), "the greeting in every channel", 60_000);
  const greetingHeardAt = performance.now();
  // The greeting's cold start (see the header): 1 s to 5 s.
  await sleep(1000);
  const cold = await cpuPerS(bridge, 4000, CHANNELS);
  // The window: 8 s to 18 s into the greeting, the agent speaking in every channel, nobody else.
  await sleep(Math.max(0, greetingHeardAt + 8000 - performance.now()));
  const window = await measureWindow(bridge, 10_000);
  // Still speaking: a voiced frame within the last second (a sentence's end pauses for some 300 ms).
  const stillSpeaking = listeners.every((m) => !quiet(m, 1000));
  await until(() => listeners.every((m) => quiet(m)), "the greeting to end", 60_000);
  const clearFrames = guilds.reduce((n, g) => n + g.voice.clearMediaFrames, 0);
  return { cold, window, stillSpeaking, clearFrames };
}

/** Phase 2: every member speaking without pause. */
interface Receive {
  /** µs per member-second over the first 2 s. */
  cold: number;
  /** The S seconds after those. */
  window: Window;
  dave: boolean;
  undecryptable: number;
  lost: number;
}

async function membersSpeaking({ guilds, members, bridge }: Crowd, phrase: Int16Array): Promise<Receive> {
  // Everyone speaks without pause. Real members' clients run on clocks of their own: their packets
  // reach the bridge at phases spread over the 20 ms, not all at once (which would batch the
  // bridge's per-packet work for free); each member starts 20/users ms after the one before.
  let speaking = true;
  const everyone = members.flat();
  const talk = async (m: SimulatedMember, i: number) => {
    await sleep((i * 20) / everyone.length);
    while (speaking) await m.say({ pcm: phrase, rate: 48000 });
  };
  const talkers = everyone.map(talk);
  const cold = await cpuPerS(bridge, 2000, CHANNELS * MEMBERS);
  const window = await measureWindow(bridge, SECONDS * 1000);
  speaking = false;
  await Promise.all(talkers);
  const stats = everyone.map((m) => m.hearingStats);
  const undecryptable = stats.reduce((n, s) => n + s.daveFailures + s.opusFailures, 0);
  // DAVE carried the audio: every member decrypted the bot's voice with its group keys (a packet or two
  // sent across an epoch change may not decrypt: counted in undecryptable_packets).
  const dave = stats.every((s) => s.daveDecrypted > 0);
  // Every packet a member sent reached the session as a frame (the bridge logs each member's count as
  // they leave; a lost or undecryptable packet is a frame short). Time first for a busy bridge to
  // read what is still queued on its sockets.
  await sleep(2000);
  const bridgeLog = join(dir, "bridge.log");
  for (const [c, g] of guilds.entries()) for (const m of members[c]!) g.memberLeavesVoice(m.userId);
  await until(
    () => memberFrames(bridgeLog).size >= CHANNELS * MEMBERS,
    "every member's count in the log",
    20_000,
  ).catch(() => {});
  const framesBy = memberFrames(bridgeLog);
  const lost = everyone.reduce((n, m) => n + Math.max(0, m.sentPackets - (framesBy.get(m.name) ?? 0)), 0);
  return { cold, window, dave, undecryptable, lost };
}

/** Phase 3: a second bridge, answering everyone; one member asks 5 times. Each answer's delay, ms. */
async function voiceToVoice(svcUrl: string, phrase: Int16Array, voicedMs: number): Promise<number[]> {
  const [askerInfo] = memberInfos(1, "asker");
  const fake2 = await startFakeDiscord({ token: TOKEN, members: [askerInfo!], daveDelayMs: DAVE_DELAY_MS });
  const bridge2 = await startBridge("bridge-v2v", svcUrl, fake2.restApi, fake2.caCertPath, {
    AGENT_GREETING: "Hello.",
  });
  const asker = fake2.member(askerInfo!.userId);
  await channel(fake2, [asker]);
  await until(() => voiced(asker) > 0 && quiet(asker), "the greeting", 60_000);
  const v2v: number[] = [];
  for (let turn = 0; turn < 5; turn++) {
    const before = voiced(asker);
    const speechEnd = performance.now() + voicedMs;
    await asker.say({ pcm: phrase, rate: 48000 });
    await until(() => voiced(asker) > before, "an answer", 20_000);
    v2v.push(asker.heardFrames().filter((f) => !f.silent)[before]!.at - speechEnd);
    await until(() => quiet(asker, 800), "the answer to end", 30_000);
  }
  fake2.memberLeavesVoice(asker.userId);
  await sleep(500);
  await stopProcess(bridge2, 20_000);
  await fake2.close();
  return v2v;
}

/** The JSON line: every figure, and the targets missed. */
function figures(f: {
  idleCpuUsPerS: number;
  out: AgentOut;
  receive: Receive;
  v2v: number[];
  timerFloor: number;
  receiveFloor: number;
}) {
  const { out, receive, v2v } = f;
  const agentOut = Math.round(out.window.cpu / (CHANNELS * out.window.s));
  const agentOutTarget =
    CHANNELS <= 2 ? f.timerFloor + TARGETS.agent_out_over_floor : TARGETS.agent_out_many_channels;
  const result = {
    cpu_us_per_speaking_user_s: Math.round(receive.window.cpu / (CHANNELS * MEMBERS * receive.window.s)),
    agent_out_cpu_us_per_s: agentOut,
    agent_out_target_us_per_s: agentOutTarget,
    voice_to_voice_ms_p50: round(percentile(v2v, 50)),
    dave: receive.dave,
    channels: CHANNELS,
    members_per_channel: MEMBERS,
    users: CHANNELS * MEMBERS,
    // The share of each figure spent on the event loop's thread (the rest: VAD, GC and compiler threads).
    agent_out_main_thread_us_per_s: Math.round(out.window.loop / (CHANNELS * out.window.s)),
    receive_main_thread_us_per_user_s: Math.round(
      receive.window.loop / (CHANNELS * MEMBERS * receive.window.s),
    ),
    agent_out_wakeups_per_s: Math.round(out.window.wakeups / out.window.s),
    receive_wakeups_per_s: Math.round(receive.window.wakeups / receive.window.s),
    lost_packets: receive.lost,
    clear_media_frames: out.clearFrames,
    targets_missed: [] as string[],
    receive_window_s: round(receive.window.s),
    out_window_s: round(out.window.s),
    agent_spoke_through_out_window: out.stillSpeaking,
    voice_to_voice_ms: v2v.map((v) => Math.round(v)),
    agent_out_cold_cpu_us_per_s: Math.round(out.cold),
    receive_cold_cpu_us_per_user_s: Math.round(receive.cold),
    bridge_idle_cpu_us_per_s: Math.round(f.idleCpuUsPerS),
    timer_20ms_floor_cpu_us_per_s: f.timerFloor,
    receive_floor_cpu_us_per_user_s: f.receiveFloor,
    undecryptable_packets: receive.undecryptable,
    // CPU the rest of the machine used during each window, in cores (others' work on a shared machine).
    other_cpu_cores_out: round(out.window.others / (out.window.s * 1e6)),
    other_cpu_cores_in: round(receive.window.others / (receive.window.s * 1e6)),
  };
  if (result.cpu_us_per_speaking_user_s > TARGETS.cpu_us_per_speaking_user_s)
    result.targets_missed.push("cpu_us_per_speaking_user_s");
  if (agentOut > agentOutTarget) result.targets_missed.push("agent_out_cpu_us_per_s");
  if (!receive.dave) result.targets_missed.push("dave");
  if (receive.lost > 0) result.targets_missed.push("lost_packets");
  if (out.clearFrames > 0) result.targets_missed.push("clear_media_frames");
  return result;
}

async function main(): Promise<void> {
  const { svc, svcUrl } = await startService();
  const { phrase, voicedMs } = question();
  const crowd = await startCrowd(svcUrl);
  // The bridge idles (logged in, no channel joined): the floor under both figures below.
  await sleep(1000);
  const idleCpuUsPerS = await cpuPerS(crowd.bridge, 3000, 1);
  const out = await agentSpeaking(crowd);
  const receive = await membersSpeaking(crowd, phrase);
  await stopProcess(crowd.bridge, 20_000);
  await crowd.fake.close();
  const v2v = await voiceToVoice(svcUrl, phrase, voicedMs);
  await stopProcess(svc, 10_000);
  const timerFloor = timerFloorUsPerS();
  const receiveFloor = receiveFloorUsPerUserS(CHANNELS * MEMBERS);
  console.log(JSON.stringify(figures({ idleCpuUsPerS, out, receive, v2v, timerFloor, receiveFloor })));
}

main()
  .catch((err: Error) => {
    process.stderr.write(`bench discord: ${err.stack ?? err.message}\n(logs in ${dir})\n`);
    for (const c of children) c.kill("SIGKILL");
    process.exitCode = 1;
  })
  .finally(() => {
    if (!process.argv.includes("--keep") && process.exitCode !== 1)
      rmSync(dir, { recursive: true, force: true });
    setTimeout(() => process.exit(), 200).unref();
  });
