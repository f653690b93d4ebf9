// One account the bridge registers with (a trunk, a PBX extension): REGISTER with digest when
// challenged, refresh half-way through the granted expiry, back off after failures (a refused
// password is said once, clearly), register again when the way to the registrar changes (our
// address, a closed TCP connection), and unregister on shutdown or drain (RFC 3261 §10).
import { createSocket } from "node:dgram";
import { lookup } from "node:dns/promises";
import type { SipRegistration } from "../../src/config/sip-access.ts";
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { DigestClient } from "./digest.ts";
import type { SipFlow } from "./flow.ts";
import {
  header,
  headerValues,
  params,
  parseNameAddr,
  type SipHeader,
  type SipRequest,
  type SipResponse,
} from "./message.ts";
import { newBranch, randomToken } from "./serialize.ts";

export type RegistrationState = "registering" | "registered" | "failed" | "unregistered";

export interface RegistrationStatus {
  /** The address of record, sip:user@registrar. */
  readonly aor: string;
  readonly state: RegistrationState;
  /** Why it failed, or what it is waiting for. */
  readonly detail?: string;
  /** Seconds the registrar granted (while registered). */
  readonly expiresS?: number;
}

export interface RegistrationDeps {
  readonly clock: Clock;
  readonly log: Logger;
  /** Sends a request through a client transaction: the final response, or a local 408/503. */
  readonly send: (req: SipRequest, flow: SipFlow) => Promise<SipResponse>;
  /** A flow to the registrar (UDP: a datagram path; TCP/TLS: a new connection, TLS checked against `name`). */
  readonly flowTo: (transport: SipFlow["transport"], address: string, port: number, name: string) => SipFlow;
  readonly listenPort: (transport: SipFlow["transport"]) => number;
  /** SIP_PUBLIC_IP: written in Contact instead of the address we route from. */
  readonly publicIp?: string;
  /** The registrar's address may send us calls whatever sip.allowFrom says. */
  readonly trust: (address: string) => void;
  /** Retry delays after failures: first, doubling to max (default 5 s to 5 min). */
  readonly backoffMs?: { readonly first: number; readonly max: number };
  /** How often the route to the registrar is checked for a change of our address (default 30 s). */
  readonly watchMs?: number;
}

const TRANSPORTS: Record<SipRegistration["transport"], SipFlow["transport"]> = {
  udp: "UDP",
  tcp: "TCP",
  tls: "TLS",
};

export class Registration {
  readonly aor: string;
  readonly #a: SipRegistration;
  readonly #d: RegistrationDeps;
  readonly #log: Logger;
  readonly #digest: DigestClient;
  readonly #callId = `${randomToken(12)}@voice-bridge`;
  readonly #fromTag = randomToken();
  readonly #transport: SipFlow["transport"];
  #cseq = 0;
  #state: RegistrationState = "registering";
  #detail: string | undefined = "first REGISTER";
  #granted: number | undefined;
  #flow: SipFlow | undefined;
  #target: { address: string; port: number } | undefined;
  #contactHost: string | undefined;
  #timer: TimerHandle | undefined;
  #watch: TimerHandle | undefined;
  #failures = 0;
  #lastProblem: string | undefined;
  #stopped = false;
  #running: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  /** The last 401/407 carried no challenge we can answer (an algorithm we lack, auth-int only). */
  #unanswerable = false;
  /** Which credentials header the last challenge asked for (401: Authorization, 407: Proxy-). */
  #authHeader: "authorization" | "proxy-authorization" = "authorization";

  constructor(account: SipRegistration, deps: RegistrationDeps) {
    this.#a = account;
    this.#d = deps;
    this.#transport = TRANSPORTS[account.transport];
    this.aor = `sip:${account.user}@${hostInUri(account.registrar.host)}`;
    this.#log = deps.log.child({ registration: this.aor });
    this.#digest = new DigestClient(account.authUser ?? account.user, account.password);
  }

  status(): RegistrationStatus {
    return {
      aor: this.aor,
      state: this.#state,
      ...(this.#detail ? { detail: this.#detail } : {}),
      ...(this.#state === "registered" && this.#granted ? { expiresS: this.#granted } : {}),
    };
  }

  start(): void {
    this.#schedule(0);
    const every = this.#d.watchMs ?? 30_000;
    const watch = (): void => {
      this.#watch = this.#d.clock.setTimeout(() => {
        void this.#checkRoute();
        watch();
      }, every);
    };
    watch();
  }

  /** Unregisters (Expires: 0) when registered; resolves once the registrar answered or gave up. */
  stop(): Promise<void> {
    this.#stopping ??= this.#unregister();
    return this.#stopping;
  }

  async #unregister(): Promise<void> {
    this.#stopped = true;
    this.#d.clock.clearTimeout(this.#timer);
    this.#d.clock.clearTimeout(this.#watch);
    await this.#running?.catch(() => {});
    if (this.#state !== "registered") {
      this.#state = "unregistered";
      return;
    }
    const res = await this.#exchange(0).catch((err: Error) => ({ status: 0, reason: err.message }));
    this.#state = "unregistered";
    this.#detail = undefined;
    this.#log.info({ status: res.status }, "sip: unregistered");
  }

  #schedule(ms: number): void {
    this.#d.clock.clearTimeout(this.#timer);
    if (this.#stopped) return;
    this.#timer = this.#d.clock.setTimeout(() => {
      this.#running = this.#register();
    }, ms);
  }

  async #register(): Promise<void> {
    let res: SipResponse | { status: number; reason: string; headers?: undefined };
    try {
      res = await this.#exchange(this.#a.expires);
    } catch (err) {
      res = { status: 0, reason: (err as Error).message };
    }
    if (this.#stopped) return;
    if (res.status >= 200 && res.status < 300 && res.headers) {
      const ours = `${hostInUri(this.#contactHost ?? "")}:${this.#d.listenPort(this.#transport)}`;
      const granted = grantedExpiry(res, ours, this.#a.expires);
      if (granted === 0) return this.#fail("the registrar granted no binding (expires 0)");
      const first = this.#state !== "registered";
      this.#state = "registered";
      this.#detail = undefined;
      this.#granted = granted;
      this.#failures = 0;
      this.#lastProblem = undefined;
      if (first) this.#log.info({ expiresS: granted, via: this.#transport }, "sip: registered");
      else this.#log.debug({ expiresS: granted }, "sip: registration refreshed");
      this.#schedule((granted * 1000) / 2);
      return;
    }
    const wrong = res.status === 401 || res.status === 403 || res.status === 407;
    if (wrong && this.#unanswerable)
      return this.#fail(
        `${res.status} ${res.reason} with no digest challenge we can answer (MD5 or SHA-256, qop=auth or none)`,
      );
    // The connection failed (refused, reset): a local 503 at once, or a 408 when it failed late.
    const broken = this.#flow?.error;
    if ((res.status === 408 || res.status === 503) && broken)
      return this.#fail(`no way to the registrar: ${broken}`);
    this.#fail(
      wrong
        ? `the registrar refused the user name or password (${res.status} ${res.reason}): check the password in SIP_REGISTER / sip.registrations`
        : res.status === 0
          ? `no way to the registrar: ${res.reason}`
          : `${res.status} ${res.reason}`,
    );
  }

  #fail(problem: string): void {
    this.#state = "failed";
    this.#granted = undefined;
    this.#failures++;
    const { first, max } = this.#d.backoffMs ?? { first: 5_000, max: 300_000 };
    const delay = Math.min(max, first * 2 ** (this.#failures - 1));
    this.#detail = `${problem}; retrying in ${Math.round(delay / 1000)} s`;
    // Said once per problem, not once per retry.
    if (problem !== this.#lastProblem)
      this.#log.error({ retryInS: delay / 1000 }, `sip: registration failed: ${problem}`);
    this.#lastProblem = problem;
    this.#digest.reset();
    this.#flow = undefined;
    this.#schedule(delay);
  }

  /** One REGISTER and, when challenged, its answered retries (at most two: a stale nonce may need one more). */
  async #exchange(expires: number): Promise<SipResponse> {
    const flow = await this.#connect();
    this.#unanswerable = false;
    let res = await this.#d.send(this.#request(expires, flow), flow);
    for (let tries = 0; tries < 2 && (res.status === 401 || res.status === 407); tries++) {
      const name = res.status === 401 ? "www-authenticate" : "proxy-authenticate";
      const challenge = this.#digest.challenged(headerValues(res, name));
      if (!challenge) {
        this.#unanswerable = true;
        break;
      }
      this.#log.debug({ status: res.status, challenge: headerValues(res, name) }, "sip: REGISTER challenged");
      // A fresh challenge that is not stale after we answered one: the password is wrong.
      if (tries > 0 && !challenge.stale) break;
      this.#authHeader = res.status === 401 ? "authorization" : "proxy-authorization";
      res = await this.#d.send(this.#request(expires, flow), flow);
    }
    if (res.status === 423) {
      const min = Number(header(res, "min-expires"));
      if (Number.isInteger(min) && min > expires && min <= 86_400 && expires > 0) {
        this.#log.info({ minExpiresS: min }, "sip: the registrar wants a longer expiry");
        return this.#exchange(min);
      }
    }
    return res;
  }

  async #connect(): Promise<SipFlow> {
    if (this.#flow?.usable && this.#target) return this.#flow;
    const where = this.#a.outboundProxy ?? this.#a.registrar;
    const port = where.port ?? (this.#a.transport === "tls" ? 5061 : 5060);
    const { address } = await lookup(where.host);
    this.#target = { address, port };
    this.#d.trust(address);
    this.#contactHost = this.#d.publicIp ?? (await routeFrom(address, port));
    this.#flow = this.#d.flowTo(this.#transport, address, port, where.host);
    return this.#flow;
  }

  /** Our address changed, or the TCP connection the registrar reaches us on closed: register again now. */
  async #checkRoute(): Promise<void> {
    if (this.#stopped || this.#state !== "registered" || !this.#target) return;
    const closed = this.#flow !== undefined && !this.#flow.usable;
    const host =
      this.#d.publicIp ?? (await routeFrom(this.#target.address, this.#target.port).catch(() => undefined));
    if (!closed && host === this.#contactHost) return;
    this.#log.info(
      { was: this.#contactHost, now: host, connectionClosed: closed },
      "sip: the way to the registrar changed, registering again",
    );
    this.#flow = undefined;
    this.#schedule(0);
  }

  #request(expires: number, flow: SipFlow): SipRequest {
    const a = this.#a;
    const host = this.#contactHost ?? flow.local.address;
    const port = this.#d.listenPort(this.#transport);
    const transport = this.#transport.toLowerCase();
    const registrarUri = `sip:${hostInUri(a.registrar.host)}${a.registrar.port ? `:${a.registrar.port}` : ""}`;
    const auth = this.#digest.authorization("REGISTER", registrarUri);
    const headers: SipHeader[] = [
      {
        name: "via",
        value: `SIP/2.0/${this.#transport} ${hostInUri(host)}:${port};branch=${newBranch()};rport`,
      },
      { name: "max-forwards", value: "70" },
      ...(a.outboundProxy
        ? [
            {
              name: "route",
              value: `<sip:${hostInUri(a.outboundProxy.host)}${a.outboundProxy.port ? `:${a.outboundProxy.port}` : ""};lr>`,
            },
          ]
        : []),
      { name: "from", value: `<${this.aor}>;tag=${this.#fromTag}` },
      { name: "to", value: `<${this.aor}>` },
      { name: "call-id", value: this.#callId },
      { name: "cseq", value: `${++this.#cseq} REGISTER` },
      {
        name: "contact",
        value: `<sip:${encodeURIComponent(a.user)}@${hostInUri(host)}:${port}${transport === "udp" ? "" : `;transport=${transport}`}>`,
      },
      { name: "expires", value: String(expires) },
      { name: "allow", value: "INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO, NOTIFY" },
      { name: "user-agent", value: "voice-bridge" },
      ...(auth ? [{ name: this.#authHeader, value: auth }] : []),
    ];
    return { kind: "request", method: "REGISTER", uri: registrarUri, headers, body: Buffer.alloc(0) };
  }
}

export function hostInUri(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** The local address the system routes to `address` from (a connected UDP socket sends nothing). */
export async function routeFrom(address: string, port: number): Promise<string> {
  const socket = createSocket(address.includes(":") ? "udp6" : "udp4");
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.connect(port, address, () => resolve());
    });
    return socket.address().address;
  } finally {
    socket.close();
  }
}

/** The expiry the registrar granted our binding: our Contact's `expires`, else Expires, else what we asked. */
function grantedExpiry(res: SipResponse, ourHostPort: string, asked: number): number {
  for (const c of headerValues(res, "contact")) {
    const uri = parseNameAddr(c)?.uri ?? "";
    if (!uri.includes(`@${ourHostPort}`)) continue;
    const e = Number(params(c).get("expires"));
    if (Number.isInteger(e) && e >= 0) return e;
  }
  const e = Number(header(res, "expires"));
  return Number.isInteger(e) && e >= 0 ? e : asked;
}
