// The package test's app: every function the package exports, used as a TypeScript developer would
// (type-checked under strict against the installed package's .d.ts, then run from it). It starts a
// bridge whose agent has a TypeScript tool reading the call's variables, and prints its URL.
import {
  type CallTurn,
  ConfigError,
  createBridge,
  DialError,
  defineAgent,
  type ToolContext,
  tool,
  type VoiceBridge,
  z,
} from "voice-bridge";

// A wrong setting is refused with the key and what was wrong.
try {
  await createBridge({ env: {}, agent: { maxCallSeconds: 1 } });
  throw new Error("a bad option was accepted");
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.log(`refused: ${err.message.split("\n").slice(1).join(" ").trim()}`);
}

const lookupOrder = tool({
  name: "lookup_order",
  description: "Looks up an order by its number",
  parameters: z.object({ order_id: z.string().describe("the order number") }),
  timeoutMs: 2000,
  execute: async ({ order_id }: { order_id: string }, ctx: ToolContext) => {
    ctx.log.info({ order_id }, "looking up");
    const owner: string | undefined = ctx.call.variables.customer;
    return { status: `ready for ${owner ?? "nobody"}`, eta: `call ${ctx.call.id.slice(0, 2)}` };
  },
});

const turns: CallTurn[] = [];
const agent = defineAgent({
  greeting: "Smoke line for {{var.customer}}.",
  tools: [lookupOrder],
  onCallStart: (call) => ({ variables: { customer: `customer of ${call.from ?? "nobody"}` } }),
  onTurn: (turn) => {
    turns.push(turn);
  },
  onCallEnd: (record) => {
    console.log(`ended ${record.callId} after ${turns.length} turns`);
  },
});

const bridge: VoiceBridge = await createBridge({ agent });
bridge.on("turn", (turn) => {
  if (turn.role === "assistant" && turn.tools.length) console.log(`tool turn: ${turn.generated}`);
});
// Placing a call is refused as POST /calls would refuse it: this bridge has no SIP trunk.
const refused = await bridge.dial({ to: "+15550100", via: "sip" }).catch((err: unknown) => err);
if (!(refused instanceof DialError)) throw new Error("dial() without a trunk was not refused");
console.log(`dial refused: ${refused.status} ${refused.field}`);
console.log(`smoke ready: ${bridge.url}`);
process.once("SIGTERM", () => void bridge.close().then(() => process.exit(0)));
