// What the bridge says once it is up: where a person or a phone system reaches the agent. The
// bridge logs it as one line (fields per entrance, for log collectors); `voice-bridge start` in a
// terminal also prints it as a box above the logs.
import { networkInterfaces } from "node:os";
import type { Config } from "../src/config/config.ts";
import { PRIVATE_SOURCES } from "../src/config/sip-access.ts";

/** How to reach the agent, one sentence per way in. */
export interface Entrances {
  /** The console (live calls, records, "Call the agent"), with the token when one is set. */
  console?: string;
  /** A simulated Twilio call from another shell (q.wav: any recording of a question). */
  simulatedCall: string;
  /** What to set as a Twilio number's voice webhook. */
  twilioWebhook: string;
  sip?: string;
  /** The accounts the bridge registers with; calls to them reach the agent. */
  sipRegistrations?: string;
  audioSocket?: string;
  discord?: string;
}

export interface EntranceFacts {
  /** The bridge's HTTP base URL as this machine reaches it. */
  url: string;
  config: Config;
  consoleUrl: string | undefined;
  sip:
    | { udpPort: number; tlsPort?: number; registrations?: () => { aor: string; state: string }[] }
    | undefined;
  audioSocket: { port: number } | undefined;
}

/** An address other machines reach for a wildcard bind: the first external IPv4, else loopback. */
function reachableHost(bound: string): string {
  if (bound !== "0.0.0.0" && bound !== "::") return bound;
  for (const addrs of Object.values(networkInterfaces()))
    for (const a of addrs ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return "127.0.0.1";
}

export function entrancesOf(f: EntranceFacts): Entrances {
  const { config } = f;
  const port = new URL(f.url).port;
  const publicUrl = config.server.publicUrl?.replace(/\/+$/, "");
  return {
    ...(f.consoleUrl ? { console: f.consoleUrl } : {}),
    // `voice-bridge call` goes to port 8080 unless told otherwise.
    simulatedCall: `voice-bridge call --say q.wav${port === "8080" ? "" : ` --url ${f.url}`}`,
    twilioWebhook: publicUrl
      ? `POST ${publicUrl}/twilio/voice`
      : `POST https://<public host>/twilio/voice (set PUBLIC_URL; a tunnel to port ${port})`,
    ...(f.sip
      ? {
          sip: `sip:agent@${config.sip.publicIp ?? reachableHost(config.sip.host)}:${f.sip.udpPort} (UDP or TCP)${f.sip.tlsPort !== undefined ? `, sip:agent@…:${f.sip.tlsPort};transport=tls (TLS)` : ""}${allowNote(config)}`,
        }
      : {}),
    ...(f.sip?.registrations?.().length
      ? {
          sipRegistrations: `${f.sip
            .registrations()
            .map((r) => `${r.aor} (${r.state})`)
            .join(", ")}; status on /readyz and /metrics`,
        }
      : {}),
    ...(f.audioSocket
      ? {
          audioSocket: `Asterisk dialplan: AudioSocket(<uuid>,${reachableHost(config.audiosocket.host)}:${f.audioSocket.port})`,
        }
      : {}),
    ...(config.discord.token
      ? { discord: "in a server the bot is in, join a voice channel and type /join" }
      : {}),
  };
}

/** Who the SIP side answers, when not everyone (a stranger's INVITE gets 403). */
function allowNote(config: Config): string {
  const list = config.sip.allowFrom;
  if (list.some((e) => e.toLowerCase() === "any")) return config.sip.users.length ? ", digest required" : "";
  const own = list.join(",") === PRIVATE_SOURCES.join(",") ? "private networks" : list.join(", ");
  return `, from ${own} only (SIP_ALLOW_FROM)${config.sip.users.length ? ", digest required" : ""}`;
}

/** The entrances as a box of text for a terminal. */
export function bannerText(e: Entrances): string {
  const rows: [string, string][] = [
    ...(e.console ? ([["Open in a browser", e.console]] as [string, string][]) : []),
    ["Simulated phone call", e.simulatedCall],
    ["", `(make q.wav with: espeak-ng -w q.wav "Where are you located?")`],
    ["Twilio voice webhook", e.twilioWebhook],
    ...(e.sip ? ([["SIP", e.sip]] as [string, string][]) : []),
    ...(e.sipRegistrations ? ([["SIP registered as", e.sipRegistrations]] as [string, string][]) : []),
    ...(e.audioSocket ? ([["AudioSocket", e.audioSocket]] as [string, string][]) : []),
    ...(e.discord ? ([["Discord", e.discord]] as [string, string][]) : []),
  ];
  const head = e.console ? "Ready. Open the console and press “Call the agent” to talk to it." : "Ready.";
  const labelWidth = Math.max(...rows.map(([l]) => l.length));
  const lines = [head, "", ...rows.map(([l, v]) => `${l.padEnd(labelWidth)}  ${v}`)];
  const width = Math.max(...lines.map((l) => l.length));
  const bar = "─".repeat(width + 2);
  return [`┌${bar}┐`, ...lines.map((l) => `│ ${l.padEnd(width)} │`), `└${bar}┘`].join("\n");
}
