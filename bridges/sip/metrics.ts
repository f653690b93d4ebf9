// The SIP server's own figures on /metrics: requests refused by reason (allow-list, rate limit,
// digest) and each registration's state, read from the server when Prometheus scrapes.
import { Counter, Gauge, type Registry } from "prom-client";
import type { SipServer } from "./index.ts";
import { REFUSAL_REASONS } from "./source-policy.ts";

export function registerSipMetrics(registry: Registry, server: SipServer): void {
  new Counter({
    name: "voice_bridge_sip_refused_total",
    help: "SIP requests refused since start: not_allowed (source outside sip.allowFrom, 403), rate_limited (dropped), unauthenticated (challenged 401), bad_credentials (403)",
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      this.reset();
      for (const reason of REFUSAL_REASONS) this.inc({ reason }, server.stats.refused[reason]);
    },
  });
  new Gauge({
    name: "voice_bridge_sip_registration_up",
    help: "1 while the registration (sip.registrations) is registered, else 0",
    labelNames: ["aor", "state"],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of server.registrations())
        this.set({ aor: r.aor, state: r.state }, r.state === "registered" ? 1 : 0);
    },
  });
}
