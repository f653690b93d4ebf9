// The `sip` section: signalling and RTP media (ports, NAT, codecs, timeouts, the RTP thread); who
// may call, registrations, TLS and SRTP are schemas of their own in sip-access.ts.
import { z } from "zod";
import {
  allowFromSchema,
  digestAlgorithmsSchema,
  rateLimitSchema,
  registrationsSchema,
  srtpSchema,
  tlsPortSchema,
  usersSchema,
} from "./sip-access.ts";
import { flag, port } from "./values.ts";

// Named once each: the TLS check's message tells the user which variables to set.
const TLS_ENV = { tlsPort: "SIP_TLS_PORT", tlsCert: "SIP_TLS_CERT", tlsKey: "SIP_TLS_KEY" } as const;

export const sipSchema = z
  .object({
    port: z
      .union([z.literal(false), z.literal("off").transform(() => false as const), port])
      .default(5060)
      .meta({
        env: "SIP_PORT",
        description: "SIP signalling port (UDP and TCP); false (`off`) disables SIP.",
      }),
    host: z
      .string()
      .min(1)
      .default("0.0.0.0")
      .meta({ env: "SIP_HOST", description: "Address SIP and RTP bind to." }),
    publicIp: z.ipv4({ error: "expected an IPv4 address such as 203.0.113.7" }).optional().meta({
      env: "SIP_PUBLIC_IP",
      description: "Address advertised in Contact and SDP when the bridge is behind NAT.",
    }),
    rtpPorts: z
      .string()
      .regex(/^\d+-\d+$/, { error: "expected a range LOW-HIGH such as 10000-20000" })
      .refine(
        (v) => {
          const [lo, hi] = v.split("-").map(Number) as [number, number];
          return lo >= 1024 && hi <= 65535 && hi - lo >= 1;
        },
        { error: "expected LOW-HIGH within 1024-65535, LOW below HIGH" },
      )
      .default("10000-20000")
      .meta({
        env: "RTP_PORTS",
        type: "port range LOW-HIGH",
        description: 'RTP port range, "LOW-HIGH" (even ports are used for RTP).',
      }),
    codecs: z
      .union([z.string(), z.array(z.string())])
      .transform((v) =>
        (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim().toLowerCase()).filter(Boolean),
      )
      .pipe(
        z
          .array(z.enum(["opus", "pcmu", "pcma"], { error: "expected codecs among opus, pcmu, pcma" }))
          .min(1, { error: "expected at least one of opus, pcmu, pcma" }),
      )
      .default(["opus", "pcmu", "pcma"])
      .meta({ env: "SIP_CODECS", description: "Codecs offered and accepted, in preference order." }),
    mediaTimeoutS: z.coerce.number().int().min(1).max(3600).default(30).meta({
      env: "SIP_MEDIA_TIMEOUT_S",
      description: "Hang up when no RTP arrives for this long, seconds.",
    }),
    rtpThread: z.enum(["worker", "main"], { error: "expected worker or main" }).default("worker").meta({
      env: "SIP_RTP_THREAD",
      description:
        "Where the calls' RTP is received and decoded: `worker`, a thread of its own whose loop does nothing but packets (on time while the sessions are busy), or `main`, the bridge's own thread. Either way the agent's packets leave from the native send thread.",
    }),
    allowFrom: allowFromSchema.meta({
      env: "SIP_ALLOW_FROM",
      type: "list of CIDR ranges, or `any`",
      description:
        "Sources (CIDR ranges) that may send requests; others get 403. Default: loopback and the private ranges; `any` opens it to everyone. Registrars and outbound proxies are added.",
    }),
    rateLimit: rateLimitSchema.meta({
      env: "SIP_RATE_LIMIT",
      description:
        "Requests per second each source may send outside calls; a flood beyond it is dropped. 0: no limit.",
    }),
    users: usersSchema.meta({
      env: "SIP_USERS",
      secret: true,
      description: "`user:password` pairs; when set, every new INVITE must pass HTTP digest authentication.",
    }),
    digestAlgorithms: digestAlgorithmsSchema.meta({
      env: "SIP_DIGEST_ALGORITHMS",
      description: "Digest algorithms offered with sip.users, in order of preference (MD5, SHA-256).",
    }),
    registrations: registrationsSchema.meta({
      env: "SIP_REGISTER",
      secret: true,
      description:
        "Accounts the bridge registers with: `sip:user:password@registrar[:port][;transport=…][;expires=N]` (whitespace-separated in the environment), or objects in a config file.",
    }),
    tlsPort: tlsPortSchema.meta({
      env: TLS_ENV.tlsPort,
      description:
        "SIP over TLS on this port (5061 by convention); off unless set. Needs tlsCert and tlsKey.",
    }),
    tlsCert: z.string().min(1).optional().meta({
      env: TLS_ENV.tlsCert,
      description: "PEM certificate (chain) file for TLS; read again on reload (SIGHUP).",
    }),
    tlsKey: z.string().min(1).optional().meta({
      env: TLS_ENV.tlsKey,
      description: "PEM private key file for TLS; read again on reload (SIGHUP).",
    }),
    tlsVerify: flag.default(true).meta({
      env: "SIP_TLS_VERIFY",
      description:
        "Check the certificate chain and name of TLS peers we connect to (registrars); false only for tests.",
    }),
    srtp: srtpSchema.meta({
      env: "SIP_SRTP",
      description:
        "SDES-SRTP: off, optional (take it when the caller offers it) or required (plain RTP gets 488).",
    }),
  })
  .prefault({})
  .superRefine((v, ctx) => {
    if (v.tlsPort === false) return;
    for (const key of ["tlsCert", "tlsKey"] as const)
      if (!v[key])
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `required when sip.tlsPort (${TLS_ENV.tlsPort}) is set: set ${TLS_ENV[key]} to a PEM file`,
        });
  })
  .meta({
    description:
      "SIP signalling and RTP media: ports, NAT, codecs, who may call, registrations, TLS and SRTP.",
  });
