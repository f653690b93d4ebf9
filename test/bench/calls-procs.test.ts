import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NODE_FLAGS } from "../../bench/lib/calls-procs.ts";

describe("calls benchmark processes", () => {
  it("runs the bridge with the Node flags bin/voice-bridge deploys", () => {
    const script = readFileSync(new URL("../../bin/voice-bridge", import.meta.url), "utf8");
    // The exec line, continuations joined: exec "$node" FLAGS… "$entry" "$@" (src/cli.ts in a
    // checkout, src/cli.js in the package).
    const exec = script.replace(/\\\n\s*/g, "").match(/^exec "\$node" (.*) "\$entry" "\$@"$/m);
    expect(exec).not.toBeNull();
    expect(exec![1]!.trim().split(/\s+/)).toEqual(NODE_FLAGS);
  });
});
