import { describe, expect, it } from "vitest";
import { bannerText, entrancesOf } from "../../app/banner.ts";
import { loadConfig } from "../../src/config/config.ts";

describe("the start-up banner", () => {
  it("says how to reach the agent: the console, the simulator, Twilio's webhook, SIP, AudioSocket", () => {
    const config = loadConfig({
      env: {
        PUBLIC_URL: "https://bridge.example.com/",
        SIP_PUBLIC_IP: "203.0.113.7",
        AUDIOSOCKET_HOST: "10.0.0.5",
      },
    });
    const e = entrancesOf({
      url: "http://127.0.0.1:8080",
      config,
      consoleUrl: "http://127.0.0.1:8080/",
      sip: { udpPort: 5060 },
      audioSocket: { port: 9092 },
    });
    expect(e).toEqual({
      console: "http://127.0.0.1:8080/",
      simulatedCall: "voice-bridge call --say q.wav",
      twilioWebhook: "POST https://bridge.example.com/twilio/voice",
      sip: "sip:agent@203.0.113.7:5060 (UDP or TCP), from private networks only (SIP_ALLOW_FROM)",
      audioSocket: "Asterisk dialplan: AudioSocket(<uuid>,10.0.0.5:9092)",
    });
    const box = bannerText(e).split("\n");
    expect(box[1]).toContain("Open the console and press “Call the agent”");
    expect(box.find((l) => l.includes("Open in a browser"))).toContain("http://127.0.0.1:8080/");
    // A box: every line as wide as the others.
    expect(new Set(box.map((l) => l.length)).size).toBe(1);
  });

  it("says who SIP answers and which accounts it registers with", () => {
    const config = loadConfig({
      env: {
        SIP_ALLOW_FROM: "any",
        SIP_USERS: "pbx:secret",
        SIP_REGISTER: "sip:1001:pw@pbx.example.com",
      },
    });
    const e = entrancesOf({
      url: "http://127.0.0.1:8080",
      config,
      consoleUrl: undefined,
      sip: {
        udpPort: 5060,
        registrations: () => [{ aor: "sip:1001@pbx.example.com", state: "registering" }],
      },
      audioSocket: undefined,
    });
    expect(e.sip).toMatch(/\(UDP or TCP\), digest required$/);
    expect(e.sipRegistrations).toBe("sip:1001@pbx.example.com (registering); status on /readyz and /metrics");
    expect(bannerText(e)).toContain("SIP registered as");
    const only = entrancesOf({
      url: "http://127.0.0.1:8080",
      config: loadConfig({ env: { SIP_ALLOW_FROM: "203.0.113.0/24" } }),
      consoleUrl: undefined,
      sip: { udpPort: 5060 },
      audioSocket: undefined,
    });
    expect(only.sip).toMatch(/from 203\.0\.113\.0\/24 only \(SIP_ALLOW_FROM\)$/);
  });

  it("without a public URL, says what Twilio needs instead of inventing an address", () => {
    const e = entrancesOf({
      url: "http://127.0.0.1:9000",
      config: loadConfig({ env: {} }),
      consoleUrl: undefined,
      sip: undefined,
      audioSocket: undefined,
    });
    expect(e.twilioWebhook).toBe(
      "POST https://<public host>/twilio/voice (set PUBLIC_URL; a tunnel to port 9000)",
    );
    // The simulator goes to port 8080 unless told where.
    expect(e.simulatedCall).toBe("voice-bridge call --say q.wav --url http://127.0.0.1:9000");
    expect(e.console).toBeUndefined();
    expect(bannerText(e)).not.toContain("Open in a browser");
  });
});
