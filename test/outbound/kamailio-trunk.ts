// The real Kamailio as an outbound trunk: every new INVITE must pass digest authentication (407
// Proxy-Authenticate; numbers starting with 9 get a 401 WWW-Authenticate instead, as some carriers
// send), then is relayed to the callee the dialled number names (record_route, so the call's
// later requests pass through it), CANCELs follow their INVITE.
import { Kamailio, kamailioHead } from "../helpers/kamailio.ts";

export interface TrunkOptions {
  readonly dir: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** Dialled number → the callee's user and 127.0.0.1 port. */
  readonly callees: Readonly<Record<string, { user: string; port: number }>>;
}

export class KamailioTrunk {
  readonly #kamailio: Kamailio;

  private constructor(kamailio: Kamailio) {
    this.#kamailio = kamailio;
  }

  get log(): string {
    return this.#kamailio.log;
  }

  static async start(o: TrunkOptions): Promise<KamailioTrunk> {
    return new KamailioTrunk(await Kamailio.start(o.dir, "trunk", o.port, config(o)));
  }

  /** Lines the script logged ("TRUNK …"). */
  lines(): string[] {
    return this.#kamailio.lines("TRUNK");
  }

  stop(): Promise<number | null> {
    return this.#kamailio.stop();
  }
}

function config(o: TrunkOptions): string {
  const routes = Object.entries(o.callees)
    .map(([number, c]) => `  if ($rU == "${number}") { $var(to) = "sip:${c.user}@127.0.0.1:${c.port}"; }`)
    .join("\n");
  return `${kamailioHead(o.port, ["auth"])}modparam("auth", "nonce_expire", 300)

request_route {
  if (!mf_process_maxfwd_header("10")) { sl_send_reply("483", "Too Many Hops"); exit; }
  if (has_totag()) {
    if (loose_route()) { t_relay(); exit; }
    if (is_method("ACK")) { if (t_check_trans()) t_relay(); exit; }
    sl_send_reply("404", "Not here");
    exit;
  }
  if (is_method("CANCEL")) {
    xlog("L_ERR", "TRUNK CANCEL $rU\\n");
    if (t_check_trans()) t_relay();
    exit;
  }
  if (is_method("ACK")) { t_check_trans(); exit; }
  if (!is_method("INVITE")) { sl_send_reply("405", "Method Not Allowed"); exit; }
  if ($rU =~ "^9") {
    if (!pv_www_authenticate("$fd", "${o.password}", "0")) {
      xlog("L_ERR", "TRUNK challenge 401 $rU\\n");
      www_challenge("$fd", "1");
      exit;
    }
  } else if (!pv_proxy_authenticate("$fd", "${o.password}", "0")) {
    xlog("L_ERR", "TRUNK challenge 407 $rU\\n");
    proxy_challenge("$fd", "1");
    exit;
  }
  if ($au != "${o.user}") { sl_send_reply("403", "Forbidden"); exit; }
  $var(to) = "";
${routes}
  if ($var(to) == "") { sl_send_reply("404", "No Such Number"); exit; }
  xlog("L_ERR", "TRUNK INVITE $rU from $fU authorized as $au to $var(to) over $pr call $ci\\n");
  $ru = $var(to);
  record_route();
  t_relay();
}
`;
}
