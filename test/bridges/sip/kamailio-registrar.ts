// The real Kamailio (Debian's package) as a registrar that requires digest authentication: auth's
// pv_www_authenticate against a password held in the script, registrar + usrloc for the bindings
// (granted expiry capped so refreshes come quickly), and calls to a registered user relayed to
// its Contact (lookup("location"), record_route so the call's later requests pass through it).
import { Kamailio, kamailioHead } from "../../helpers/kamailio.ts";

export interface RegistrarOptions {
  readonly dir: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** The longest expiry granted, seconds. */
  readonly maxExpiresS: number;
  /** Kamailio closes a TCP connection idle this long (tcp_connection_lifetime; default 120 s). */
  readonly tcpIdleS?: number;
}

export class KamailioRegistrar {
  readonly #kamailio: Kamailio;

  private constructor(kamailio: Kamailio) {
    this.#kamailio = kamailio;
  }

  get log(): string {
    return this.#kamailio.log;
  }

  static async start(o: RegistrarOptions, run: string): Promise<KamailioRegistrar> {
    return new KamailioRegistrar(await Kamailio.start(o.dir, run, o.port, config(o)));
  }

  /** Lines the script logged (xlog "REG …" and "CALL …"). */
  lines(prefix: string): string[] {
    return this.#kamailio.lines(prefix);
  }

  stop(): Promise<number | null> {
    return this.#kamailio.stop();
  }
}

function config(o: RegistrarOptions): string {
  const idle = o.tcpIdleS ? `tcp_connection_lifetime=${o.tcpIdleS}\n` : "";
  return `${kamailioHead(o.port, ["usrloc", "registrar", "auth"])}${idle}modparam("registrar", "max_expires", ${o.maxExpiresS})
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
    xlog("L_ERR", "REG saved $fu contact $ct expires $hdr(Expires) from $pr:$si:$sp\\n");
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
