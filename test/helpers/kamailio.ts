// The real Kamailio (Debian's package) run by a test with a script it writes: one process, its log
// in a file the test reads (xlog lines), stopped at the end. The registrar and the outbound trunk
// are scripts on top of this.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { stopProcess, waitForLine } from "../../bench/lib/calls-procs.ts";
import { until } from "./until.ts";

/** Modules every test script loads: transactions, stateless replies, record-route, logging. */
const BASE_MODULES = ["tm", "sl", "rr", "pv", "maxfwd", "textops", "siputils", "xlog"];

/** A script's head: UDP and TCP on 127.0.0.1:`port`, small, logging to stderr, with `modules` loaded. */
export function kamailioHead(port: number, modules: readonly string[]): string {
  return `#!KAMAILIO
listen=udp:127.0.0.1:${port}
listen=tcp:127.0.0.1:${port}
children=2
tcp_children=2
log_stderror=yes
debug=1
mpath="/usr/lib/x86_64-linux-gnu/kamailio/modules/"
${[...BASE_MODULES, ...modules].map((m) => `loadmodule "${m}.so"`).join("\n")}
`;
}

export class Kamailio {
  readonly log: string;
  readonly #child: ChildProcess;

  private constructor(log: string, child: ChildProcess) {
    this.log = log;
    this.#child = child;
  }

  /** Runs `script` (listening on `port`) with its files under `dir`, named `name`; resolves once it listens. */
  static async start(dir: string, name: string, port: number, script: string): Promise<Kamailio> {
    const run = join(dir, name);
    mkdirSync(run, { recursive: true });
    const cfg = join(dir, `${name}.cfg`);
    writeFileSync(cfg, script);
    const log = join(dir, `${name}.log`);
    const fd = openSync(log, "a");
    const child = spawn(
      "kamailio",
      ["-DD", "-E", "-f", cfg, "-Y", run, "-P", join(run, "kamailio.pid"), "-m", "32", "-M", "8"],
      { stdio: ["ignore", fd, fd] },
    );
    closeSync(fd);
    await waitForLine(log, new RegExp(`udp: 127\\.0\\.0\\.1:${port}`), 30_000, child);
    // Kamailio logs its sockets before it binds them: a client quick off the mark (a bridge
    // registering over TCP) would be refused.
    await until(() => accepts(port), `kamailio accepting TCP on ${port}`);
    return new Kamailio(log, child);
  }

  /** The log's lines that contain `text`. */
  lines(text: string): string[] {
    return readFileSync(this.log, "utf8")
      .split("\n")
      .filter((l) => l.includes(text));
  }

  stop(): Promise<number | null> {
    return stopProcess(this.#child, 5000);
  }
}

/** Whether a TCP connection to 127.0.0.1:`port` is accepted (then closed at once). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
