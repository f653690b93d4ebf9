// runScenarios() from the TypeScript API: sets given in code, each scenario a real call through the
// real bridge and the Twilio simulator, on the real local service (espeak-ng says the caller's
// lines, PocketSphinx hears them, the scripted engine plays the model by the rules below). Each
// expectation is checked both ways: met ones pass, and the same ones asking for what did not
// happen fail, saying what was seen. No expectation here hinges on the recognizer's words: the
// keypad carries what must be understood, and the spoken lines need only be heard as speech.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { defineAgent, runScenarios, type ScenarioResult, tool, z } from "../../../../app/index.ts";
import { encodeWav } from "../../../../codecs/wav.ts";
import { type LocalService, startLocalService } from "../../../../src/service/index.ts";
import { speak } from "../../../helpers/speech.ts";

const dir = mkdtempSync(join(tmpdir(), "vb-agent-tests-"));

/** What the scripted engine does in place of a model: keys are an order number, 0 the operator. */
const RULES = {
  name: "agent tests",
  greeting: "Hello.",
  fallback: "Nothing will fail here.",
  rules: [
    {
      intent: "operator",
      when: ["keypad: 0\\b"],
      reply: "Putting you through.",
      tool: { name: "transfer_call", arguments: { reason: "caller pressed 0" } },
      after_tool: "",
    },
    {
      intent: "order",
      when: ["keypad: \\d"],
      slots: { order_id: "keypad: ([\\d ]+)" },
      reply: "Let me check.",
      tool: { name: "lookup_order", arguments: { order_id: "{order_id}" } },
      after_tool: "Order {order_id} is {result.status}.",
    },
  ],
};

const lookupOrder = tool({
  name: "lookup_order",
  description: "Looks an order up.",
  parameters: z.object({ order_id: z.string() }),
  execute: ({ order_id }, ctx) => ({
    status: `ready for ${ctx.call.variables.who ?? "nobody"} (${order_id})`,
  }),
});

const shop = defineAgent({
  greeting: "Hello {{var.who}}, this is the shop.",
  transferTarget: "+15550100",
  tools: [lookupOrder],
});

const byName = (results: ScenarioResult[], name: string) => results.find((r) => r.scenario === name)!;
/** Each expectation's words and whether it passed. */
const verdicts = (r: ScenarioResult) => r.expectations.map((e) => [e.expectation, e.passed]);

beforeAll(() => {
  writeFileSync(join(dir, "rules.yaml"), stringify(RULES));
  writeFileSync(join(dir, "line.wav"), encodeWav(speak("Hello, is anybody there?", { rate: 16000 }), 16000));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("runScenarios", () => {
  let results: ScenarioResult[];
  const told: string[] = [];

  beforeAll(async () => {
    results = await runScenarios(
      [
        {
          name: "shop",
          agent: shop,
          scripted: "rules.yaml",
          scenarios: [
            {
              name: "an order by keypad",
              from: "+15550001234",
              variables: { who: "Ada" },
              caller: [{ keys: "4217#" }],
              expect: [
                { says: "Hello Ada, this is the shop.", turn: 1 },
                { says: "Hello Ada, this is the shop!", turn: 1 },
                { tool: "lookup_order", arguments: { order_id: "4217" } },
                { tool: "lookup_order", arguments: { order_id: { pattern: "^42\\d\\d$" } } },
                { tool: "lookup_order", arguments: { order_id: "9999" } },
                { tool: "transfer_call", not: true },
                { says: { pattern: "order 4217 is ready for ada" }, turn: "last" },
                { says: { pattern: "ready for grace" } },
                { says: { pattern: "grace" }, not: true },
                { outcome: "caller_hangup" },
                { outcome: "agent_hangup" },
                { transfer: false },
                { answeredBy: "default" },
                { answersWithinMs: 20_000 },
                { answersWithinMs: 1 },
                { greetsWithinMs: 20_000 },
                { greetsWithinMs: 1 },
                { says: { judge: "The agent tells the caller the status of the order." } },
              ],
            },
            {
              name: "the operator by keypad",
              caller: [{ keys: "0" }],
              expect: [
                { tool: "transfer_call" },
                { transfer: "+1 555 0100" },
                { transfer: "+15550199" },
                { outcome: "transferred" },
              ],
            },
            {
              name: "a recording, and a judge that fails",
              caller: [{ audio: "line.wav" }],
              expect: [
                { says: "Nothing will fail here.", turn: 2 },
                { says: { judge: "The agent is helpful." } },
                { says: { judge: "The agent is helpful." }, not: true },
              ],
            },
          ],
        },
      ],
      { dir, onResult: (r) => told.push(r.scenario) },
    );
  }, 180_000);

  it("tells each result as it comes, in order", () => {
    expect(told).toEqual([
      "an order by keypad",
      "the operator by keypad",
      "a recording, and a judge that fails",
    ]);
    expect(results.map((r) => r.file)).toEqual(["shop", "shop", "shop"]);
  });

  it("checks the agent's words, its tool calls and their arguments, the outcome, who answered and how soon", () => {
    const r = byName(results, "an order by keypad");
    expect(r.error).toBeUndefined();
    expect(verdicts(r)).toEqual([
      ['says "Hello Ada, this is the shop." (turn 1)', true],
      ['says "Hello Ada, this is the shop!" (turn 1)', false],
      ['calls lookup_order {"order_id":"4217"}', true],
      ['calls lookup_order {"order_id":{"pattern":"^42\\\\d\\\\d$"}}', true],
      ['calls lookup_order {"order_id":"9999"}', false],
      ["does not call transfer_call", true],
      ["says /order 4217 is ready for ada/ (its last turn)", true],
      ["says /ready for grace/", false],
      ["does not say /grace/", true],
      ["ends caller_hangup", true],
      ["ends agent_hangup", false],
      ["does not transfer", true],
      ["is answered by agent default", true],
      ["answers each line within 20000 ms", true],
      ["answers each line within 1 ms", false],
      ["speaks first within 20000 ms", true],
      ["speaks first within 1 ms", false],
      ['is judged to meet "The agent tells the caller the status of the order."', true],
    ]);
    expect(r.passed).toBe(false);
    const seen = (i: number) => r.expectations[i]!.seen;
    expect(seen(1)).toBe('1: "Hello Ada, this is the shop."');
    expect(seen(7)).toBe(
      '1: "Hello Ada, this is the shop." · 2: "Let me check.Order 4217 is ready for Ada (4217)."',
    );
    expect(seen(4)).toBe('tool calls: lookup_order {"order_id":"4217"}');
    expect(seen(10)).toMatch(/^ended caller_hangup \(/);
    expect(seen(14)).toMatch(/^"\(keys 4217#\)" \d+ ms$/);
    expect(seen(16)).toMatch(/^first audio after \d+ ms$/);
    expect(seen(17)).toMatch(/^the judge: pass/);
    expect(r.transcript).toEqual([
      "agent: Hello Ada, this is the shop.",
      "caller: (the caller pressed on the keypad: 4 2 1 7 #)",
      "agent: Let me check.Order 4217 is ready for Ada (4217).",
    ]);
    expect(r.record?.from).toBe("+15550001234");
  });

  it("sees a transfer through Twilio's REST API", () => {
    const r = byName(results, "the operator by keypad");
    expect(verdicts(r)).toEqual([
      ["calls transfer_call", true],
      ["transfers to +1 555 0100", true],
      ["transfers to +15550199", false],
      ["ends transferred", true],
    ]);
    expect(r.expectations[2]!.seen).toBe("transferred to +15550100");
  });

  it("plays a WAV file as a caller's line; the judge's verdict comes from the chat model", () => {
    const r = byName(results, "a recording, and a judge that fails");
    // The scripted engine stands in for the judge: it names the verdict the conversation names
    // ("fail"), whatever the rubric (docs/agent-tests.md).
    expect(verdicts(r)).toEqual([
      ['says "Nothing will fail here." (turn 2)', true],
      ['is judged to meet "The agent is helpful."', false],
      ['is judged not to meet "The agent is helpful."', true],
    ]);
    expect(r.expectations[1]!.seen).toMatch(/^the judge: fail/);
    expect(r.transcript[1]).toMatch(/^caller: \S/);
  });
});

describe("runScenarios against a hosted service", () => {
  let hosted: LocalService;
  beforeAll(async () => {
    hosted = await startLocalService({ dataDir: join(dir, "hosted"), apiKeys: ["hosted-key-0123"] });
  });
  afterAll(() => hosted.close());

  it("runs on the service SVC_BASE_URL and SVC_API_KEY name, as the bridge takes them", async () => {
    const [r] = await runScenarios(
      [
        {
          name: "hosted",
          agent: { greeting: "Hello from afar." },
          scenarios: [
            {
              name: "a spoken line",
              caller: ["Hello there."],
              expect: [
                { says: "Hello from afar.", turn: 1 },
                { says: { pattern: "." }, turn: 2 },
              ],
            },
          ],
        },
      ],
      { env: { SVC_BASE_URL: hosted.url, SVC_API_KEY: "hosted-key-0123" } },
    );
    expect(verdicts(r!)).toEqual([
      ['says "Hello from afar." (turn 1)', true],
      ["says /./ (turn 2)", true],
    ]);
    // The caller's line was said by its TTS, heard by its recognizer, answered by its model.
    const asked = hosted.requests();
    for (const endpoint of ["POST /v1/audio/speech", "POST /v1/audio/asr/sse", "POST /v1/chat/completions"])
      expect(asked[endpoint]?.requests ?? 0, endpoint).toBeGreaterThan(0);
  }, 90_000);
});
