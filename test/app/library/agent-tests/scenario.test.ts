// A scenario file is checked whole before anything runs: shorthands read as their long forms, and
// every mistake is named by the file, the place in it and what is wrong.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareSet } from "../../../../app/library/agent-tests/prepare.ts";
import {
  checkScenarioSet,
  readScenarioFile,
  ScenarioFileError,
  type ScenarioSet,
} from "../../../../app/library/agent-tests/scenario.ts";

const dir = mkdtempSync(join(tmpdir(), "vb-scenarios-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The problems a set has, as the error lists them. */
function problems(value: unknown): readonly string[] {
  try {
    checkScenarioSet(value, "orders.test.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(ScenarioFileError);
    expect((err as ScenarioFileError).message.split("\n")[0]).toBe("orders.test.yaml:");
    return (err as ScenarioFileError).problems;
  }
  throw new Error("the set was accepted");
}

describe("a scenario set", () => {
  it("reads the shorthands as their long forms, with the defaults", () => {
    const set = checkScenarioSet(
      {
        agent: "./agent.ts#hotline",
        scenarios: [
          {
            name: "order",
            caller: ["Where is my order?", { keys: "4217#" }, { say: "Thanks", voice: "en_female_aria" }],
            expect: [
              { says: "Goodbye." },
              { says: { pattern: "shipped" }, turn: "last" },
              { tool: "lookup_order" },
            ],
          },
        ],
      },
      "in code",
    );
    const [s] = set.scenarios;
    expect(s!.caller).toEqual([
      { say: "Where is my order?" },
      { keys: "4217#" },
      { say: "Thanks", voice: "en_female_aria" },
    ]);
    expect(s!.expect[0]).toEqual({ says: { exact: "Goodbye." } });
    expect(s!.maxSeconds).toBe(30);
  });

  it("names each mistake by its place in the file", () => {
    expect(
      problems({
        agent: 42,
        agents: { "no spaces": "./a.ts" },
        scenarios: [
          {
            name: "one",
            caller: [
              { sya: "hi" },
              { keys: "12x" },
              { say: "hi", audio: "a.wav" },
              { audio: "a.wav", voice: "x" },
            ],
            expect: [
              { says: { pattern: "(" } },
              { tool: "lookup_order", turn: 2 },
              {},
              { outcome: "hung_up" },
              { says: "hi", arguments: { a: 1 } },
              { says: { judge: "polite" }, turn: 2 },
            ],
          },
          { name: "one", expect: [] },
        ],
      }),
    ).toEqual([
      "agent: expected a module's export (./agent.ts#name) or the agent's settings (a mapping)",
      "agents.no spaces: an agent name of letters, digits, _ and - (at most 64)",
      'scenarios.0.caller.0: Unrecognized key: "sya"',
      "scenarios.0.caller.0: expected exactly one of say, audio, keys",
      "scenarios.0.caller.1.keys: expected keypad keys: 0-9, *, # and A-D",
      "scenarios.0.caller.2: expected exactly one of say, audio, keys (found say and audio)",
      "scenarios.0.caller.3.voice: goes with say, not with audio",
      "scenarios.0.expect.0.says.pattern: not a regular expression: Invalid regular expression: /(/i: Unterminated group",
      "scenarios.0.expect.1.turn: goes with says, not with tool",
      "scenarios.0.expect.2: expected exactly one of says, tool, outcome, transfer, answeredBy, answersWithinMs, greetsWithinMs",
      expect.stringMatching(
        /^scenarios\.0\.expect\.3\.outcome: Invalid option: expected one of "agent_hangup"\|/,
      ),
      "scenarios.0.expect.4.arguments: goes with tool, not with says",
      "scenarios.0.expect.5.turn: a judge reads the whole call: say which turn in the rubric",
      "scenarios.1.expect: expected at least one expectation",
    ]);
    // Once each scenario reads right, their names must differ (results and JUnit name them).
    const one = { name: "one", expect: [{ outcome: "caller_hangup" }] };
    expect(problems({ scenarios: [one, one] })).toEqual(['scenarios.1.name: a second scenario named "one"']);
    expect(problems({ agent: {} })).toEqual(["scenarios: Invalid input: expected array, received undefined"]);
  });

  it("from a file: YAML errors and unreadable files are named too", async () => {
    const bad = join(dir, "bad.test.yaml");
    writeFileSync(bad, "scenarios:\n  - name: a\n  name: b\n   - x\n");
    await expect(readScenarioFile(bad)).rejects.toThrow(/bad\.test\.yaml:\n {2}- not valid YAML: .*line \d+/);
    await expect(readScenarioFile(join(dir, "none.yaml"))).rejects.toThrow(
      /none\.yaml:\n {2}- cannot read it/,
    );
  });

  it("stops before any call at a module, export, setting or recording that is not there", async () => {
    writeFileSync(join(dir, "agent.ts"), "export const hotline = { greeting: 'Hello.' };\n");
    const options = { dir, env: {} };
    const set = (over: Partial<ScenarioSet>): ScenarioSet => ({
      name: "set",
      scenarios: [{ name: "s", expect: [{ outcome: "caller_hangup" }] }],
      ...over,
    });
    await expect(prepareSet(set({ agent: "./missing.ts" }), options)).rejects.toThrow(
      /set:\n {2}- agent: cannot import .*missing\.ts/,
    );
    await expect(prepareSet(set({ agent: "./agent.ts#hotlin" }), options)).rejects.toThrow(
      "set:\n  - agent: " +
        join(dir, "agent.ts") +
        ' has no agent exported as "hotlin" (its exports: hotline)',
    );
    // A setting written wrong in a file (in code, TypeScript refuses it first).
    const typo = join(dir, "typo.test.yaml");
    writeFileSync(
      typo,
      "agents:\n  sales: { greting: Hi. }\nscenarios: [{ name: s, expect: [{ answeredBy: sales }] }]\n",
    );
    await expect(prepareSet(typo, options)).rejects.toThrow(
      /typo\.test\.yaml:\n {2}- invalid configuration:\n {2}- .*typo\.test\.yaml: agents\.sales\.greting: unknown key/,
    );
    await expect(
      prepareSet(
        set({
          scenarios: [
            { name: "s", caller: [{ audio: "./none.wav" }], expect: [{ outcome: "caller_hangup" }] },
          ],
        }),
        options,
      ),
    ).rejects.toThrow(/set:\n {2}- scenarios\.0\.caller\.0\.audio: .*none\.wav/);
    const ready = await prepareSet(set({ agent: "./agent.ts#hotline", hotwords: ["order"] }), options);
    expect(ready.tree).toMatchObject({ agent: { greeting: "Hello." }, service: { hotwords: ["order"] } });
  });
});
