import { describe, expect, it } from "vitest";
import { matches, routeFor } from "../../src/agents/routes.ts";
import { nowIn, TemplateRenderer } from "../../src/agents/templates.ts";
import { unknownTemplateNames } from "../../src/config/templates.ts";

describe("per-call variables", () => {
  const vars = {
    caller: "+15551234",
    called: "+15550001",
    transport: "sip",
    params: { "x-account": "A 17/b" },
    vars: { tier: "gold" },
    now: "Tuesday",
  };

  it("fills every kind of name, and each absent one renders empty, reported once", () => {
    const missing: string[] = [];
    const t = new TemplateRenderer(vars, (n) => missing.push(n));
    expect(
      t.render(
        "{{caller}}→{{ called }} on {{transport}} ({{param.x-account}}, {{var.tier}}, {{now}}) {{var.nope}}{{var.nope}}",
      ),
    ).toBe("+15551234→+15550001 on sip (A 17/b, gold, Tuesday) ");
    expect(missing).toEqual(["var.nope"]);
    // In a URL, values are encoded; a parameter does not reach the prototype.
    expect(t.render("https://x.example/a/{{param.x-account}}", encodeURIComponent)).toBe(
      "https://x.example/a/A%2017%2Fb",
    );
    expect(t.render("{{param.constructor}}")).toBe("");
  });

  it("names what can never be filled", () => {
    expect(unknownTemplateNames("{{caller}} {{caler}} {{param.}} {{vars.x}} {{var.ok}} {{ now }}")).toEqual([
      "caler",
      "param.",
      "vars.x",
    ]);
  });

  it("writes {{now}} in the agent's time zone", () => {
    const at = new Date("2026-01-15T23:30:00Z");
    expect(nowIn("UTC", at)).toBe("Thursday, 15 January 2026 at 23:30 (UTC)");
    expect(nowIn("Europe/Paris", at)).toBe("Friday, 16 January 2026 at 00:30 (Europe/Paris)");
  });
});

describe("routes", () => {
  it("match exactly or with * as any run of characters", () => {
    expect(matches("+44*", "+442071234567")).toBe(true);
    expect(matches("+44*", "+15550001")).toBe(false);
    expect(matches("*.example.com", "sip.example.com")).toBe(true);
    expect(matches("1.2", "1x2")).toBe(false);
    expect(matches("+15550001", undefined)).toBe(false);
  });

  it("the first route whose every condition holds wins", () => {
    const routes = [
      { transport: "sip" as const, to: "sales", agent: "sip-sales" },
      { to: "sales", agent: "sales" },
      { guild: "G1", channel: "C2", agent: "room" },
      { from: "+44*", agent: "uk" },
    ];
    const call = (o: object) => ({ callId: "c", transport: "twilio" as const, params: {}, ...o });
    expect(routeFor(routes, call({ transport: "sip", to: "sales" }))?.agent).toBe("sip-sales");
    expect(routeFor(routes, call({ to: "sales", from: "+44123" }))?.agent).toBe("sales");
    expect(routeFor(routes, call({ from: "+44123" }))?.agent).toBe("uk");
    expect(routeFor(routes, call({ params: { guildId: "G1", channelId: "C2" } }))?.agent).toBe("room");
    expect(routeFor(routes, call({ params: { guildId: "G1", channelId: "C3" } }))).toBeUndefined();
  });
});
