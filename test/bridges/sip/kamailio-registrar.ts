// The real Kamailio (Debian's package) as a registrar that requires digest authentication: auth's
// pv_www_authenticate against a password held in the script, registrar + usrloc for the bindings
// (granted expiry capped so refreshes come quickly), and calls to a registered user relayed to
// its Contact (lookup("location"), record_route so the call's later requests pass through it).
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stopProcess, waitForLine } from "../../../bench/lib/calls-procs.ts";

export interface RegistrarOptions {
  readonly dir: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** The longest expiry granted, seconds. */
  readonly maxExpiresS: number;
}

export class KamailioRegistrar {
  readonly log: string;
  readonly #child: ChildProcess;

  private constructor(log: string, child: ChildProcess) {
    this.log = log;
    this.#child = child;
  }

  static async start(o: RegistrarOptions, run: string): Promise<KamailioRegistrar> {
    mkdirSync(join(o.dir, run), { recursive: true });
    const cfg = join(o.dir, `${run}.cfg`);
    writeFileSync(cfg, config(o));
    const log = join(o.dir, `${run}.log`);
    const fd = openSync(log, "a");
    const child = spawn(
      "kamailio",
      [
        "-DD",
        "-E",
        "-f",
        cfg,
        "-Y",
        join(o.dir, run),
        "-P",
        join(o.dir, run, "kamailio.pid"),
        "-m",
        "32",
        "-M",
        "8",
      ],
      { stdio: ["ignore", fd, fd] },
    );
    closeSync(fd);
    await waitForLine(log, new RegExp(`udp: 127\\.0\\.0\\.1:${o.port}`), 30_000, child);
    return new KamailioRegistrar(log, child);
  }

  /** Lines the script logged (xlog "REG …" and "CALL …"). */
  lines(prefix: string): string[] {
    return readFileSync(this.log, "utf8")
      .split("\n")
      .filter((l) => l.includes(prefix));
  }

  stop(): Promise<number | null> {
    return stopProcess(this.#child, 5000);
  }
}

function config(o: RegistrarOptions): string {
  return `#!KAMAILIO
listen=udp:127.0.0.1:${o.port}
listen=tcp:127.0.0.1:${o.port}
children=2
tcp_children=2
log_stderror=yes
debug=1
mpath="/usr/lib/x86_64-linux-gnu/kamailio/modules/"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "textops.so"
loadmodule "siputils.so"
loadmodule "xlog.so"
loadmodule "usrloc.so"
loadmodule "registrar.so"
loadmodule "auth.so"
modparam("registrar", "max_expires", ${o.maxExpiresS})
modparam("registrar", "min_expires", 1)
modparam("auth", "nonce_expire", 300)

request_route {
  if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
  if (is_method("REGISTER")) {
    if (!pv_www_authenticate("$fd", "${o.password}", "0")) {
      xlog("L_ERR", "REG challenge $fu from $si ($rc)\\n");
      www_challenge("$fd", "1");
      exit;
    }
    if ($au != "${o.user}") { sl_send_reply("403", "Forbidden"); exit; }
    if (!save("location")) { sl_reply_error(); exit; }
    xlog("L_ERR", "REG saved $fu contact $ct expires $hdr(Expires)\\n");
    exit;
  }
  if (has_totag()) {
    if (loose_route()) { t_relay(); exit; }
    if (is_method("ACK")) { if (t_check_trans()) t_relay(); exit; }
    sl_send_reply("404", "Not here");
    exit;
  }
  if (is_method("CANCEL")) { if (t_check_trans()) t_relay(); exit; }
  if (is_method("INVITE")) record_route();
  if (!lookup("location")) {
    xlog("L_ERR", "CALL no binding for $ru\\n");
    sl_send_reply("404", "Not Found");
    exit;
  }
  xlog("L_ERR", "CALL to $ru\\n");
  t_relay();
}
`;
}
