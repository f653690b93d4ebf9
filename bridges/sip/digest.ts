// HTTP digest authentication as SIP uses it (RFC 3261 §22, RFC 7616, RFC 8760: SHA-256 beside MD5,
// qop=auth), both ways and free of any transport: the server side challenges and checks
// credentials (nonces that expire and are bound to the source address), the client side answers
// a registrar's or a proxy's challenge. Header values in, header values out.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Algorithms in the order a client prefers them (RFC 8760 §2.4: the strongest it supports). */
const HASHES = { "SHA-256": "sha256", MD5: "md5" } as const;
export type DigestAlgorithm = keyof typeof HASHES;
export const DIGEST_ALGORITHMS = Object.keys(HASHES) as readonly DigestAlgorithm[];

/** Longest Authorization / WWW-Authenticate value read; beyond it the header is refused unread. */
export const MAX_AUTH_HEADER = 4096;

/** `Digest a=b, c="d"` → the scheme and its parameters (names lower-cased), or undefined. */
export function parseAuthHeader(value: string): { scheme: string; params: Map<string, string> } | undefined {
  if (value.length > MAX_AUTH_HEADER) return undefined;
  const m = /^\s*([A-Za-z][\w-]*)\s+/.exec(value);
  if (!m) return undefined;
  const params = new Map<string, string>();
  let i = m[0].length;
  const s = value;
  while (i < s.length) {
    const name = /^\s*([A-Za-z][\w-]*)\s*=\s*/.exec(s.slice(i));
    if (!name) return undefined;
    i += name[0].length;
    let v: string;
    if (s[i] === '"') {
      let out = "";
      let j = i + 1;
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === "\\" && j + 1 < s.length) j++;
        out += s[j];
      }
      if (j >= s.length) return undefined; // unterminated quote
      v = out;
      i = j + 1;
    } else {
      const tok = /^[^\s,"]*/.exec(s.slice(i))![0];
      v = tok;
      i += tok.length;
    }
    const key = name[1]!.toLowerCase();
    if (params.has(key)) return undefined; // a repeated parameter is ambiguous: refuse it
    params.set(key, v);
    const sep = /^\s*(,|$)\s*/.exec(s.slice(i));
    if (!sep) return undefined;
    i += sep[0].length;
  }
  return { scheme: m[1]!.toLowerCase(), params };
}

function algorithmOf(raw: string | undefined): DigestAlgorithm | undefined {
  const a = (raw ?? "MD5").toUpperCase();
  return a === "MD5" || a === "SHA-256" ? a : undefined;
}

const hash = (alg: DigestAlgorithm, text: string): string =>
  createHash(HASHES[alg]).update(text).digest("hex");

export interface DigestInput {
  readonly algorithm: DigestAlgorithm;
  readonly username: string;
  readonly realm: string;
  readonly password: string;
  readonly method: string;
  readonly uri: string;
  readonly nonce: string;
  /** With qop=auth: the nonce count (8 hex digits) and the client's nonce. */
  readonly qop?: { readonly nc: string; readonly cnonce: string };
}

/** The `response` value: H(H(A1):nonce[:nc:cnonce:qop]:H(A2)), A1 = user:realm:password, A2 = METHOD:uri. */
export function digestResponse(d: DigestInput): string {
  const ha1 = hash(d.algorithm, `${d.username}:${d.realm}:${d.password}`);
  const ha2 = hash(d.algorithm, `${d.method}:${d.uri}`);
  const middle = d.qop ? `${d.nonce}:${d.qop.nc}:${d.qop.cnonce}:auth` : d.nonce;
  return hash(d.algorithm, `${ha1}:${middle}:${ha2}`);
}

/**
 * The credentials' uri names the request's target: the Request-URI itself, or (as SIPp writes it)
 * the same host and port without the user. Anything else was computed for another request.
 */
function sameTarget(uri: string, requestUri: string): boolean {
  if (uri === requestUri) return true;
  const hostPort = (u: string): string | undefined =>
    /^sips?:(?:[^@;?]*@)?([^;?>]+)/i.exec(u.trim())?.[1]?.toLowerCase();
  const a = hostPort(uri);
  return a !== undefined && a === hostPort(requestUri);
}

const quote = (v: string): string => `"${v.replace(/["\\]/g, "\\$&")}"`;

// ---------------------------------------------------------------------------------------------
// Client: answering a 401 (WWW-Authenticate) or 407 (Proxy-Authenticate).

export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly opaque?: string;
  readonly algorithm: DigestAlgorithm;
  readonly qopAuth: boolean;
  readonly stale: boolean;
}

/** A challenge we can answer, or undefined (not Digest, no realm/nonce, an algorithm we lack, qop without auth). */
export function parseChallenge(value: string): DigestChallenge | undefined {
  const h = parseAuthHeader(value);
  if (h?.scheme !== "digest") return undefined;
  const realm = h.params.get("realm");
  const nonce = h.params.get("nonce");
  const algorithm = algorithmOf(h.params.get("algorithm"));
  if (realm === undefined || !nonce || !algorithm) return undefined;
  const qop = h.params.get("qop");
  const qopAuth = qop?.split(",").some((q) => q.trim().toLowerCase() === "auth") ?? false;
  if (qop !== undefined && !qopAuth) return undefined; // auth-int only: we do not hash bodies
  const opaque = h.params.get("opaque");
  return {
    realm,
    nonce,
    algorithm,
    qopAuth,
    stale: h.params.get("stale")?.toLowerCase() === "true",
    ...(opaque !== undefined ? { opaque } : {}),
  };
}

/** The strongest challenge among several headers (SHA-256 before MD5). */
export function pickChallenge(values: readonly string[]): DigestChallenge | undefined {
  const all = values.flatMap((v) => parseChallenge(v) ?? []);
  const order = Object.keys(HASHES) as DigestAlgorithm[];
  return all.sort((a, b) => order.indexOf(a.algorithm) - order.indexOf(b.algorithm))[0];
}

/**
 * One account's side of digest: it keeps the last challenge so refreshes carry credentials at
 * once (the nonce count going up), and answers new challenges.
 */
export class DigestClient {
  readonly #user: string;
  readonly #password: string;
  #challenge: DigestChallenge | undefined;
  #nc = 0;

  constructor(user: string, password: string) {
    this.#user = user;
    this.#password = password;
  }

  /** Takes a new challenge (a 401/407's header values); false when none is usable. */
  challenged(values: readonly string[]): DigestChallenge | undefined {
    const c = pickChallenge(values);
    if (c) {
      this.#challenge = c;
      this.#nc = 0;
    }
    return c;
  }

  /** Forgets the challenge (a new registrar, a restart): the next request goes without credentials. */
  reset(): void {
    this.#challenge = undefined;
  }

  /** The Authorization value for `method uri` under the last challenge, or undefined before any. */
  authorization(method: string, uri: string): string | undefined {
    const c = this.#challenge;
    if (!c) return undefined;
    const qop = c.qopAuth
      ? { nc: (++this.#nc).toString(16).padStart(8, "0"), cnonce: randomBytes(8).toString("hex") }
      : undefined;
    const response = digestResponse({
      algorithm: c.algorithm,
      username: this.#user,
      realm: c.realm,
      password: this.#password,
      method,
      uri,
      nonce: c.nonce,
      ...(qop ? { qop } : {}),
    });
    const parts = [
      `username=${quote(this.#user)}`,
      `realm=${quote(c.realm)}`,
      `nonce=${quote(c.nonce)}`,
      `uri=${quote(uri)}`,
      `response=${quote(response)}`,
      `algorithm=${c.algorithm}`,
      ...(qop ? [`qop=auth`, `nc=${qop.nc}`, `cnonce=${quote(qop.cnonce)}`] : []),
      ...(c.opaque !== undefined ? [`opaque=${quote(c.opaque)}`] : []),
    ];
    return `Digest ${parts.join(", ")}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Server: challenging requests and checking their credentials.

export type DigestVerdict =
  | { readonly ok: true; readonly user: string }
  /** Answer 401 with a (new) challenge; `stale`: the credentials were right but the nonce expired. */
  | { readonly ok: false; readonly action: "challenge"; readonly stale: boolean; readonly reason: string }
  /** Answer 403: credentials under a nonce of ours that are wrong. */
  | { readonly ok: false; readonly action: "forbid"; readonly reason: string };

export interface DigestServerOptions {
  readonly realm: string;
  readonly users: readonly { readonly user: string; readonly password: string }[];
  /** Milliseconds since an epoch (the session clock's `now`). */
  readonly now: () => number;
  /**
   * Algorithms offered, in order of preference, one WWW-Authenticate each (default MD5 alone:
   * phones without SHA-256 give up on a 401 that carries any SHA-256 challenge — baresip 1.x's
   * libre — or read only the first one — SIPp 3.6).
   */
  readonly algorithms?: readonly DigestAlgorithm[];
  /** How long a nonce is good for (default 5 minutes). */
  readonly nonceLifetimeMs?: number;
}

/** Nonce counts remembered at most (oldest forgotten first): a flood cannot grow memory. */
const MAX_TRACKED_NONCES = 10_000;

export class DigestServer {
  readonly realm: string;
  readonly #passwords: ReadonlyMap<string, string>;
  readonly #now: () => number;
  readonly #lifetime: number;
  readonly #algorithms: readonly DigestAlgorithm[];
  readonly #secret = randomBytes(32);
  /** Highest nonce count seen per nonce (qop=auth replay protection). */
  readonly #counts = new Map<string, number>();

  constructor(o: DigestServerOptions) {
    this.realm = o.realm;
    this.#passwords = new Map(o.users.map((u) => [u.user, u.password]));
    this.#now = o.now;
    this.#lifetime = o.nonceLifetimeMs ?? 5 * 60_000;
    this.#algorithms = o.algorithms?.length ? o.algorithms : ["MD5"];
  }

  /** WWW-Authenticate values for a 401 to `source`, one per algorithm in order of preference (RFC 8760 §2.4). */
  challenge(source: string, stale = false): string[] {
    const nonce = this.#nonce(source, this.#now());
    return this.#algorithms.map(
      (alg) =>
        `Digest realm=${quote(this.realm)}, nonce=${quote(nonce)}, algorithm=${alg}, qop="auth"${stale ? ", stale=true" : ""}`,
    );
  }

  /** Checks a request's Authorization values (as sent) against `method` and the Request-URI. */
  verify(values: readonly string[], method: string, requestUri: string, source: string): DigestVerdict {
    const mine = values
      .map((v) => parseAuthHeader(v))
      .find((h) => h?.scheme === "digest" && h.params.get("realm") === this.realm);
    if (!mine) {
      const reason = values.length === 0 ? "no credentials" : "credentials not for our realm, or unreadable";
      return { ok: false, action: "challenge", stale: false, reason };
    }
    const p = mine.params;
    const nonce = p.get("nonce") ?? "";
    const issued = this.#issuedAt(nonce, source);
    if (issued === undefined)
      return {
        ok: false,
        action: "challenge",
        stale: false,
        reason: "nonce not ours (or from another address)",
      };
    const algorithm = algorithmOf(p.get("algorithm"));
    if (!algorithm || !this.#algorithms.includes(algorithm))
      return {
        ok: false,
        action: "challenge",
        stale: false,
        reason: `algorithm ${p.get("algorithm")} not offered`,
      };
    const username = p.get("username") ?? "";
    const password = this.#passwords.get(username);
    if (password === undefined)
      return { ok: false, action: "forbid", reason: `unknown user "${username.slice(0, 64)}"` };
    const uri = p.get("uri") ?? "";
    if (!sameTarget(uri, requestUri))
      return { ok: false, action: "forbid", reason: "uri does not match the Request-URI" };
    const qop = p.get("qop");
    const nc = p.get("nc") ?? "";
    const cnonce = p.get("cnonce") ?? "";
    if (qop !== undefined && (qop.toLowerCase() !== "auth" || !/^[0-9a-f]{8}$/i.test(nc) || !cnonce))
      return { ok: false, action: "forbid", reason: "qop without a valid nc and cnonce" };
    const expected = digestResponse({
      algorithm,
      username,
      realm: this.realm,
      password,
      method,
      uri,
      nonce,
      ...(qop !== undefined ? { qop: { nc, cnonce } } : {}),
    });
    const given = Buffer.from(p.get("response") ?? "");
    const want = Buffer.from(expected);
    if (given.length !== want.length || !timingSafeEqual(given, want))
      return { ok: false, action: "forbid", reason: `wrong credentials for "${username.slice(0, 64)}"` };
    if (this.#now() - issued > this.#lifetime)
      return { ok: false, action: "challenge", stale: true, reason: "nonce expired" };
    if (qop !== undefined && !this.#countUp(nonce, Number.parseInt(nc, 16)))
      return { ok: false, action: "challenge", stale: false, reason: "nonce count replayed" };
    return { ok: true, user: username };
  }

  /**
   * `<issued ms, base 36>.<random>.<HMAC over both, the source and the realm>`: nothing stored per
   * challenge, each one unique, unusable from another address.
   */
  #nonce(source: string, at: number): string {
    const head = `${Math.floor(at).toString(36)}.${randomBytes(6).toString("base64url")}`;
    return `${head}.${this.#mac(head, source)}`;
  }

  #mac(head: string, source: string): string {
    return createHmac("sha256", this.#secret).update(`${head}:${source}:${this.realm}`).digest("base64url");
  }

  #issuedAt(nonce: string, source: string): number | undefined {
    const dot = nonce.lastIndexOf(".");
    if (dot <= 0 || nonce.length > 128) return undefined;
    const head = nonce.slice(0, dot);
    const given = Buffer.from(nonce.slice(dot + 1));
    const want = Buffer.from(this.#mac(head, source));
    if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
    const at = Number.parseInt(head, 36);
    return Number.isFinite(at) ? at : undefined;
  }

  #countUp(nonce: string, nc: number): boolean {
    const last = this.#counts.get(nonce) ?? 0;
    if (nc <= last) return false;
    this.#counts.delete(nonce);
    this.#counts.set(nonce, nc);
    if (this.#counts.size > MAX_TRACKED_NONCES) {
      const oldest = this.#counts.keys().next().value;
      if (oldest !== undefined) this.#counts.delete(oldest);
    }
    return true;
  }
}
