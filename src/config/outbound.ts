// The `outbound` section: limits on the calls the bridge places (POST /calls, `voice-bridge dial`),
// their defaults, and how each carrier is reached: SIP through an outbound proxy with digest
// credentials, Twilio through its REST API.
import { z } from "zod";
import { type HostPort, hostPort, type SipTransportName } from "./sip-access.ts";

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
    maxConcurrent: z.coerce.number().int().min(1).max(100_000).default(10).meta({
      env: "OUTBOUND_MAX_CONCURRENT",
      description:
        "Outbound calls in progress (ringing or answered) at most; one more gets 429 with Retry-After.",
    }),
    callsPerSecond: z.coerce.number().min(0.01).max(1000).default(1).meta({
      env: "OUTBOUND_CALLS_PER_SECOND",
      description:
        "New outbound calls per second at most (a bucket of one second's worth, at least one call); beyond it 429 with Retry-After.",
    }),
    ringTimeoutS: z.coerce.number().int().min(5).max(120).default(30).meta({
      env: "OUTBOUND_RING_TIMEOUT_S",
      description: "Default ring timeout of an outbound call, seconds (5-120); a request may set its own.",
    }),
    machineDetection: z
      .enum(MACHINE_DETECTION, { error: "expected off, hangup or message" })
      .default("hangup")
      .meta({
        env: "OUTBOUND_MACHINE_DETECTION",
        description:
          "Default answering-machine policy: off, hangup (hang up on a machine) or message (leave voicemailMessage after the beep).",
      }),
    voicemailMessage: z.string().min(1).max(2000).optional().meta({
      env: "OUTBOUND_VOICEMAIL_MESSAGE",
      description:
        "Default message left on a voicemail, templated like greetings ({{var.NAME}}); unset: a short generic one.",
    }),
    sip: z
      .object({
        proxy: proxySchema.optional().meta({
          env: "SIP_OUTBOUND_PROXY",
          description:
            "Where outbound INVITEs go: sip:host[:port][;transport=udp|tcp|tls]. Unset: SIP dialling is off.",
        }),
        user: z.string().min(1).optional().meta({
          env: "SIP_OUTBOUND_USER",
          description: "Digest user name for the outbound proxy's 401/407 challenges.",
        }),
        password: z.string().min(1).optional().meta({
          env: "SIP_OUTBOUND_PASSWORD",
          secret: true,
          description: "Digest password for the outbound proxy's 401/407 challenges.",
        }),
        from: z.string().min(1).optional().meta({
          env: "SIP_OUTBOUND_FROM",
          description: "Caller id of SIP calls: a number (sent as sip:NUMBER@<proxy host>) or a SIP URI.",
        }),
      })
      .prefault({})
      .meta({ description: "SIP dialling: the outbound proxy or trunk, its credentials, the caller id." }),
    twilio: z
      .object({
        from: z.string().min(1).optional().meta({
          env: "TWILIO_OUTBOUND_FROM",
          description: "The Twilio number outbound calls come from (E.164), unless a request names one.",
        }),
        amd: z.enum(["twilio", "bridge"], { error: "expected twilio or bridge" }).default("twilio").meta({
          env: "TWILIO_OUTBOUND_AMD",
          description:
            "Whose answering-machine detection Twilio calls use: Twilio's own (asyncAmd) or the bridge's, on the media stream.",
        }),
        apiBase: z
          .url({ protocol: /^https?$/, error: "expected an http(s) URL" })
          .optional()
          .meta({
            env: "TWILIO_API_BASE",
            description:
              "Another base URL for Twilio's REST API (a compatible gateway, tests); default Twilio's.",
          }),
      })
      .prefault({})
      .meta({
        description: "Twilio dialling (needs twilio.accountSid, twilio.authToken and server.publicUrl).",
      }),
  })
  .prefault({})
  .meta({
    description: "Calls the bridge places (POST /calls, voice-bridge dial): limits, defaults, carriers.",
  });

export type OutboundConfig = z.infer<typeof outboundSchema>;
