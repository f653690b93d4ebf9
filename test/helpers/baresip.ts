// A real phone for SIP tests: Debian's baresip, headless, driven over its ctrl_tcp socket
// (netstrings of JSON). It dials, plays a WAV into the call, sends RFC 4733 digits, hangs up,
// and records both directions (sndfile's dumps: what it sent, what it heard).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, tcpBindable } from "./free-port.ts";

export type BaresipCodec = "pcmu" | "pcma" | "opus";

export interface BaresipOptions {
  codec: BaresipCodec;
  /** 16-bit mono WAV at 8 kHz (G.711) or 48 kHz (Opus) played into the call; baresip hangs up at its end. */
  wav: string;
  /** Sample rate of `wav` (default 8000). */
  wavRate?: number;
  /** The caller's SIP user (default `caller`): the call's From; extra account parameters (e.g. `;auth_pass=…`). */
  user?: string;
  accountParams?: string;
  /** More config lines (e.g. TLS settings) and modules to load. */
  extraConfig?: string[];
}

export interface BaresipEvent {
  type: string;
  param?: string;
  [key: string]: unknown;
}

const CODEC_NAMES: Record<BaresipCodec, string> = { pcmu: "pcmu", pcma: "pcma", opus: "opus/48000/2" };

/** A port `p` free with `p + 1` (baresip listens for SIP over TLS on sip_listen's port + 1). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (await tcpBindable(port + 1)) return port;
  }
}

/** What baresip prints once its modules are loaded (ctrl_tcp listening, or failed to). */
const READY = "baresip is ready.";

class PortTaken extends Error {
  constructor(output: string) {
    super(`baresip could not bind its ports:\n${output}`);
  }
}

export class Baresip {
  readonly dir: string;
  /** Where it takes calls (sip_listen on 127.0.0.1). */
  sipPort = 0;
  readonly events: BaresipEvent[] = [];
  readonly #proc: ChildProcess;
  readonly #ctrl: Socket;
  #buffer = "";
  #waiters: (() => void)[] = [];
  readonly exited: Promise<number | null>;
  output = "";

  private constructor(dir: string, proc: ChildProcess, ctrl: Socket) {
    this.dir = dir;
    this.#proc = proc;
    this.#ctrl = ctrl;
    this.exited = new Promise((resolve) => proc.once("exit", (code) => resolve(code)));
    ctrl.setEncoding("utf8");
    ctrl.on("data", (chunk: string) => this.#read(chunk));
  }

  /**
   * Starts baresip. Its ports are picked free, below the ephemeral range (free-port.ts), but another
   * program on the machine can still take one before baresip binds it: a start that fails to bind
   * is retried on other ports.
   */
  static async start(opts: BaresipOptions): Promise<Baresip> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await Baresip.#start(opts);
      } catch (err) {
        if (!(err instanceof PortTaken) || attempt >= 3) throw err;
      }
    }
  }

  static async #start(opts: BaresipOptions): Promise<Baresip> {
    const dir = mkdtempSync(join(tmpdir(), "baresip-"));
    const [sipPort, ctrlPort] = [await freePortPair(), await freePort()];
    writeFileSync(
      join(dir, "config"),
      [
        `sip_listen 127.0.0.1:${sipPort}`,
        `audio_source aufile,${opts.wav}`,
        "audio_player aufile,/dev/null",
        "audio_alert aufile,/dev/null",
        `ausrc_srate ${opts.wavRate ?? 8000}`,
        "ausrc_channels 1",
        "module_path /usr/lib/baresip/modules",
        "module g711.so",
        "module opus.so",
        "module aufile.so",
        "module sndfile.so",
        "module_tmp account.so",
        "module_app menu.so",
        "module_app ctrl_tcp.so",
        `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
        `snd_path ${dir}`,
        ...(opts.extraConfig ?? []),
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "accounts"),
      `<sip:${opts.user ?? "caller"}@127.0.0.1>;regint=0;audio_codecs=${CODEC_NAMES[opts.codec]}${opts.accountParams ?? ""}\n`,
    );
    const proc = spawn("baresip", ["-f", dir], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    proc.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    proc.stderr?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const closed = new Promise((resolve) => proc.once("close", resolve));
    // ctrl_tcp listens once the modules are loaded: try until it answers (up to 10 s: on a busy
    // machine, with other test files running beside, loading took over 5 s), or baresip gives up.
    let ctrl: Socket | undefined;
    for (let i = 0; i < 200 && !ctrl && proc.exitCode === null; i++) {
      ctrl = await new Promise<Socket | undefined>((resolve) => {
        const s = connect(ctrlPort, "127.0.0.1");
        s.once("connect", () => resolve(s));
        s.once("error", () => resolve(undefined));
      });
      if (!ctrl) await new Promise((r) => setTimeout(r, 50));
    }
    // The socket that answered may be another program's, which took the port first (baresip then
    // runs on without its control socket, and every command is lost): once baresip says it is
    // ready, a port it could not bind is a start to try again.
    for (let i = 0; i < 200 && ctrl && proc.exitCode === null && !output.includes(READY); i++)
      await new Promise((r) => setTimeout(r, 50));
    if (ctrl && (!output.includes(READY) || /Address already in use/.test(output))) {
      ctrl.destroy();
      ctrl = undefined;
    }
    if (!ctrl) {
      proc.kill("SIGKILL");
      await closed; // all of its output read
      if (/Address already in use/.test(output)) throw new PortTaken(output);
      throw new Error(`baresip did not start its control socket:\n${output}`);
    }
    const b = new Baresip(dir, proc, ctrl);
    b.sipPort = sipPort;
    proc.stdout?.on("data", (d: Buffer) => {
      b.output += d.toString();
    });
    b.output = output;
    return b;
  }

  /** Sends one command (dial, hangup, sndcode, …). */
  command(command: string, params = ""): void {
    const json = JSON.stringify({ command, params, token: String(Date.now()) });
    this.#ctrl.write(`${Buffer.byteLength(json)}:${json},`);
  }

  dial(uri: string): void {
    this.command("dial", uri);
  }

  /** RFC 4733 digits, e.g. "12#". */
  sendDigits(digits: string): void {
    this.command("sndcode", digits);
  }

  hangUp(): void {
    this.command("hangup");
  }

  /** Resolves with the first event of `type` (seen already or to come); rejects after `timeoutMs`. */
  async waitFor(type: string, timeoutMs = 20_000): Promise<BaresipEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((e) => e.type === type);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `baresip: no ${type} within ${timeoutMs} ms; events: ${this.events.map((e) => e.type).join(", ")}\n${this.output.slice(-2000)}`,
        );
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The sndfile dumps: what baresip sent into the call, and what it heard. */
  dumps(): { sent: string | undefined; heard: string | undefined } {
    const files = readdirSync(this.dir);
    const find = (suffix: string) => {
      const f = files.find((n) => n.startsWith("dump-") && n.endsWith(suffix));
      return f ? join(this.dir, f) : undefined;
    };
    return { sent: find("-enc.wav"), heard: find("-dec.wav") };
  }

  async stop(): Promise<void> {
    this.#ctrl.destroy();
    if (this.#proc.exitCode === null) {
      this.#proc.kill("SIGTERM");
      const killer = setTimeout(() => this.#proc.kill("SIGKILL"), 3000);
      await this.exited;
      clearTimeout(killer);
    }
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    for (;;) {
      const colon = this.#buffer.indexOf(":");
      if (colon < 0) return;
      const len = Number(this.#buffer.slice(0, colon));
      if (!Number.isInteger(len) || this.#buffer.length < colon + 1 + len + 1) return;
      const body = this.#buffer.slice(colon + 1, colon + 1 + len);
      this.#buffer = this.#buffer.slice(colon + 1 + len + 1);
      try {
        const msg = JSON.parse(body) as BaresipEvent & { event?: boolean };
        if (msg.event) this.events.push(msg);
      } catch {
        // Not JSON: a response line we do not need.
      }
      for (const w of this.#waiters.splice(0)) w();
    }
  }
}
