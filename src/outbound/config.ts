// The `outbound` section: limits on the calls the bridge places (POST /calls, `voice-bridge dial`),
// their defaults, and how each carrier is reached: SIP through an outbound proxy with digest
// credentials, Twilio through its REST API.
import { z } from "zod";
import { type HostPort, hostPort, type SipTransportName } from "../sip-access-config.ts";

/** Where outbound INVITEs go: `sip:host[:port][;transport=udp|tcp|tls]`. */
export interface OutboundProxy extends HostPort {
  readonly transport: SipTransportName;
}

/** `sip:host[:port][;transport=…]`, or why it is not one. */
export function parseProxyUri(s: string): OutboundProxy | string {
  const m = /^(sips?):([^;]+)((?:;[^;]*)*)$/i.exec(s.trim());
  if (!m) return "expected sip:host[:port][;transport=udp|tcp|tls]";
  const hp = hostPort(m[2]!);
  if (!hp) return `"${m[2]}" is not host or host:port`;
  let transport: SipTransportName = m[1]!.toLowerCase() === "sips" ? "tls" : "udp";
  for (const p of m[3]!.split(";").filter(Boolean)) {
    const [k, v = ""] = p.split("=");
    if (k?.trim().toLowerCase() === "lr") continue;
    if (k?.trim().toLowerCase() !== "transport") return `unknown parameter ;${k} (expected transport)`;
    const t = v.trim().toLowerCase();
    if (t !== "udp" && t !== "tcp" && t !== "tls") return `transport=${v}: expected udp, tcp or tls`;
    transport = t;
  }
  return { ...hp, transport };
}

const proxySchema = z.string().transform((s, ctx): OutboundProxy => {
  const r = parseProxyUri(s);
  if (typeof r !== "string") return r;
  ctx.addIssue({ code: "custom", message: r });
  return z.NEVER;
});

export const MACHINE_DETECTION = ["off", "hangup", "message"] as const;
export type MachineDetection = (typeof MACHINE_DETECTION)[number];

export const outboundSchema = z
  .object({
    /** Outbound calls in progress (ringing or answered) at most; one more gets 429. */
    maxConcurrent: z.coerce.number().int().min(1).max(100_000).default(10),
    /** New outbound calls per second at most (a bucket of one second's worth); beyond it 429. */
    callsPerSecond: z.coerce.number().min(0.01).max(1000).default(1),
    /** Default ring timeout, seconds (5–120); a request may set its own. */
    ringTimeoutS: z.coerce.number().int().min(5).max(120).default(30),
    /** Default answering-machine policy: off, hangup (on a machine) or message (leave voicemailMessage). */
    machineDetection: z
      .enum(MACHINE_DETECTION, { error: "expected off, hangup or message" })
      .default("hangup"),
    /** Default message left on a voicemail (templated like greetings: {{var.NAME}}). */
    voicemailMessage: z.string().min(1).max(2000).optional(),
    sip: z
      .object({
        /** Where INVITEs go: sip:host[:port][;transport=…]. Unset: SIP dialling is off. */
        proxy: proxySchema.optional(),
        /** Digest credentials for the proxy's 401/407 challenges. */
        user: z.string().min(1).optional(),
        password: z.string().min(1).optional(),
        /** Caller id: a number (becomes sip:NUMBER@proxy host) or a SIP URI. */
        from: z.string().min(1).optional(),
      })
      .prefault({}),
    twilio: z
      .object({
        /** The Twilio number calls come from (E.164), unless a request names one. */
        from: z.string().min(1).optional(),
        /** Whose answering-machine detection Twilio calls use: Twilio's own (asyncAmd) or the bridge's. */
        amd: z.enum(["twilio", "bridge"], { error: "expected twilio or bridge" }).default("twilio"),
        /** Another base URL for Twilio's REST API (a compatible gateway; tests). Default Twilio's. */
        apiBase: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }).optional(),
      })
      .prefault({}),
  })
  .prefault({});

export type OutboundConfig = z.infer<typeof outboundSchema>;

/** Environment variables of the section (config.ts merges them into ENV_KEYS). */
export const OUTBOUND_ENV_KEYS: Readonly<Record<string, readonly string[]>> = {
  OUTBOUND_MAX_CONCURRENT: ["outbound", "maxConcurrent"],
  OUTBOUND_CALLS_PER_SECOND: ["outbound", "callsPerSecond"],
  OUTBOUND_RING_TIMEOUT_S: ["outbound", "ringTimeoutS"],
  OUTBOUND_MACHINE_DETECTION: ["outbound", "machineDetection"],
  OUTBOUND_VOICEMAIL_MESSAGE: ["outbound", "voicemailMessage"],
  SIP_OUTBOUND_PROXY: ["outbound", "sip", "proxy"],
  SIP_OUTBOUND_USER: ["outbound", "sip", "user"],
  SIP_OUTBOUND_PASSWORD: ["outbound", "sip", "password"],
  SIP_OUTBOUND_FROM: ["outbound", "sip", "from"],
  TWILIO_OUTBOUND_FROM: ["outbound", "twilio", "from"],
  TWILIO_OUTBOUND_AMD: ["outbound", "twilio", "amd"],
  TWILIO_API_BASE: ["outbound", "twilio", "apiBase"],
};
