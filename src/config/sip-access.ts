// The `sip` config keys that decide who may reach the bridge and where it registers: the source
// allow-list, the per-source request rate, digest users, registrations (trunks and PBX extensions),
// TLS and SRTP. Kept apart from config.ts so the schema of each concern reads in one place.
import { isIP } from "node:net";
import { z } from "zod";

/** Loopback and the private ranges (RFC 1918, RFC 4193): what a bridge answers with no allow-list set. */
export const PRIVATE_SOURCES = [
  "127.0.0.0/8",
  "::1/128",
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "fc00::/7",
] as const;

const listOf = (v: unknown): unknown =>
  typeof v === "string"
    ? v
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean)
    : v;

function cidrProblem(entry: string): string | undefined {
  if (entry.toLowerCase() === "any") return undefined;
  const [ip, prefix, extra] = entry.split("/");
  const family = isIP(ip ?? "");
  if (!family || extra !== undefined) return `"${entry}" is not an address or CIDR range`;
  if (prefix === undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `"${entry}": prefix must be 0-${max}`;
  return undefined;
}

export const allowFromSchema = z
  .preprocess(
    listOf,
    z
      .array(z.string())
      .min(1, { error: "expected at least one range, or any" })
      .superRefine((list, ctx) => {
        for (const entry of list) {
          const problem = cidrProblem(entry);
          if (problem)
            ctx.addIssue({
              code: "custom",
              message: `${problem}: expected CIDR ranges such as 10.0.0.0/8, 203.0.113.7, 2001:db8::/32, or any`,
            });
        }
      }),
  )
  .default([...PRIVATE_SOURCES]);

export interface SipUser {
  readonly user: string;
  readonly password: string;
}

const userObject = z.object({ user: z.string().min(1), password: z.string().min(1) });

/** `user:password`, or `{user, password}` in a config file. */
const userPair = z.unknown().transform((v, ctx): SipUser => {
  if (typeof v !== "string") {
    const r = userObject.safeParse(v);
    if (r.success) return r.data;
    ctx.addIssue({ code: "custom", message: "expected user:password or {user, password}" });
    return z.NEVER;
  }
  const colon = v.indexOf(":");
  if (colon <= 0 || colon === v.length - 1) {
    ctx.addIssue({ code: "custom", message: `"${v.slice(0, 40)}" is not user:password` });
    return z.NEVER;
  }
  return { user: v.slice(0, colon), password: v.slice(colon + 1) };
});

export const usersSchema = z
  .preprocess(listOf, z.array(userPair))
  .default([])
  .meta({ type: "list of `user:password` (or {user, password} in a config file)" });

export type SipTransportName = "udp" | "tcp" | "tls";

export interface HostPort {
  readonly host: string;
  readonly port?: number;
}

/** One account the bridge registers with (a trunk or a PBX extension). */
export interface SipRegistration {
  /** The user part of the address of record (sip:user@domain); calls for it reach the agent. */
  readonly user: string;
  /** The registrar's domain (To/From and the Request-URI) and where REGISTER is sent unless a proxy is set. */
  readonly registrar: HostPort;
  readonly password: string;
  /** The digest user name when it differs from the AOR's user. */
  readonly authUser?: string;
  /** Sends REGISTER here instead of the registrar's address. */
  readonly outboundProxy?: HostPort;
  readonly transport: SipTransportName;
  /** Expiry asked for, seconds (the registrar may grant less). */
  readonly expires: number;
}

export function hostPort(s: string): HostPort | undefined {
  const m = /^(\[[^\]]+\]|[^:/@;\s[\]]+)(?::(\d{1,5}))?$/.exec(s.trim());
  if (!m || (m[2] && Number(m[2]) > 65535)) return undefined;
  return { host: m[1]!.replace(/^\[(.*)\]$/, "$1"), ...(m[2] ? { port: Number(m[2]) } : {}) };
}

const hostPortSchema = z.string().transform((s, ctx): HostPort => {
  const hp = hostPort(s.replace(/^sips?:/i, ""));
  if (!hp) {
    ctx.addIssue({ code: "custom", message: `"${s}" is not host or host:port` });
    return z.NEVER;
  }
  return hp;
});

const transportSchema = z.enum(["udp", "tcp", "tls"], { error: "expected udp, tcp or tls" });
const expiresSchema = z.coerce.number().int().min(60, { error: "expected at least 60 seconds" }).max(86400);

/** `sip:user:password@registrar[:port][;transport=udp|tcp|tls][;expires=N]`, or a reason it is not. */
export function parseRegistrationUri(s: string): SipRegistration | string {
  const m = /^sips?:(.+)$/i.exec(s.trim());
  if (!m) return "expected sip:user:password@registrar[:port][;transport=udp|tcp|tls][;expires=N]";
  const rest = m[1]!;
  const at = rest.lastIndexOf("@");
  if (at < 0) return "missing user:password@ before the registrar";
  const cred = rest.slice(0, at);
  const colon = cred.indexOf(":");
  if (colon <= 0) return "missing the password (sip:user:password@registrar)";
  const [where, ...paramList] = rest.slice(at + 1).split(";");
  const registrar = hostPort(where ?? "");
  if (!registrar) return `"${where}" is not a registrar host[:port]`;
  let transport: SipTransportName = /^sips:/i.test(s) ? "tls" : "udp";
  let expires = 3600;
  for (const p of paramList) {
    const [k, v = ""] = p.split("=");
    const key = (k ?? "").trim().toLowerCase();
    if (key === "transport") {
      const t = transportSchema.safeParse(v.trim().toLowerCase());
      if (!t.success) return `transport=${v}: expected udp, tcp or tls`;
      transport = t.data;
    } else if (key === "expires") {
      const e = expiresSchema.safeParse(v);
      if (!e.success) return `expires=${v}: expected whole seconds, 60-86400`;
      expires = e.data;
    } else return `unknown parameter ;${key} (expected transport or expires)`;
  }
  const decode = (x: string): string => {
    try {
      return decodeURIComponent(x);
    } catch {
      return x;
    }
  };
  return {
    user: decode(cred.slice(0, colon)),
    password: decode(cred.slice(colon + 1)),
    registrar,
    transport,
    expires,
  };
}

const registrationObject = z.object({
  user: z.string().min(1).meta({
    description: "The user part of the address of record (sip:user@domain); calls for it reach the agent.",
  }),
  password: z.string().min(1).meta({ secret: true, description: "The digest password." }),
  registrar: hostPortSchema.meta({
    type: "host or host:port",
    description:
      "The registrar's domain (To/From and the Request-URI) and where REGISTER is sent unless a proxy is set.",
  }),
  authUser: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "The digest user name when it differs from the AOR's user." }),
  outboundProxy: hostPortSchema.optional().meta({
    type: "host or host:port",
    description: "Sends REGISTER here instead of the registrar's address.",
  }),
  transport: transportSchema.default("udp").meta({
    description:
      "Transport REGISTER is sent over (from a URI: udp, or tls for a `sips:` URI, unless `;transport=` says).",
  }),
  expires: expiresSchema
    .default(3600)
    .meta({ description: "Expiry asked for, seconds (the registrar may grant less)." }),
});

/**
 * A URI string, or an object in a config file (its fields' own errors kept). The transform hides
 * the object's schema from a walker, so the metadata points the configuration reference at it.
 */
const registration = z
  .unknown()
  .transform((v, ctx): SipRegistration => {
    if (typeof v === "string") {
      const r = parseRegistrationUri(v);
      if (typeof r !== "string") return r;
      ctx.addIssue({ code: "custom", message: r });
      return z.NEVER;
    }
    const r = registrationObject.safeParse(v);
    if (r.success) return r.data;
    for (const issue of r.error.issues)
      ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    return z.NEVER;
  })
  .meta({
    type: "`sip:user:password@registrar[:port][;transport=…][;expires=N]`, or an object",
    objectForm: registrationObject,
  });

/** From the environment, several registrations are separated by whitespace. */
export const registrationsSchema = z
  .preprocess((v) => (typeof v === "string" ? v.split(/\s+/).filter(Boolean) : v), z.array(registration))
  .default([]);

/** Requests per second each source may send outside calls (INVITE, OPTIONS, REGISTER …); 0: no limit. */
export const rateLimitSchema = z.coerce
  .number({ error: "expected requests per second (0: no limit)" })
  .min(0)
  .default(50);

/**
 * Digest algorithms offered to callers, one challenge each in order of preference. MD5 alone by
 * default: phones without SHA-256 give up on the whole 401 when any challenge in it is SHA-256
 * (baresip 1.x's libre answers ENOSYS) or read only the first (SIPp 3.6). `SHA-256,MD5` offers both.
 */
export const digestAlgorithmsSchema = z
  .preprocess(
    (v) => {
      const list = listOf(v);
      return Array.isArray(list) ? list.map((a) => (typeof a === "string" ? a.toUpperCase() : a)) : list;
    },
    z
      .array(z.enum(["MD5", "SHA-256"], { error: "expected MD5 or SHA-256" }))
      .min(1, { error: "expected MD5, SHA-256 or both" }),
  )
  .default(["MD5"]);

/** SIP over TLS: a port (5061 by convention) or off; off unless set. */
export const tlsPortSchema = z
  .union([
    z.literal(false),
    z.literal("off").transform(() => false as const),
    z.coerce
      .number({ error: "expected a port number 0-65535 or off" })
      .int()
      .min(0, { error: "expected a port number 0-65535 or off" })
      .max(65535, { error: "expected a port number 0-65535 or off" }),
  ])
  .default(false);

/** SDES-SRTP (RFC 4568): off, optional (take it when offered), or required (plain RTP gets 488). */
export const srtpSchema = z
  .enum(["off", "optional", "required"], { error: "expected off, optional or required" })
  .default("optional");
