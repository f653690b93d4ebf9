// A broken copy of the hotline's agent (examples/hotline/hotline-agent.ts), for the test that
// shows `voice-bridge test` failing: its tool was renamed find_order, while its prompt still asks
// for lookup_order. The model (offline: the scripted engine, which calls lookup_order only when it
// is offered) can no longer look the order up.
import { defineAgent, tool, z } from "voice-bridge";

/** The shop's customers by phone number (a real hotline asks its CRM). */
const CUSTOMERS: Record<string, { id: string; name: string }> = {
  "+15550001234": { id: "C-100", name: "Ada" },
  "+15550005678": { id: "C-200", name: "Grace" },
};

/** The orders (a real hotline asks its order system). */
const ORDERS: Record<string, { customer: string; status: string; eta: string }> = {
  "4217": { customer: "C-100", status: "shipped", eta: "Thursday" },
  "5310": { customer: "C-200", status: "being packed", eta: "next Monday" },
};

const lookupOrder = tool({
  name: "find_order",
  description: "Looks up one of the caller's orders by its number: its status and delivery day.",
  parameters: z.object({ order_id: z.string().describe("the order number the caller gave") }),
  execute: async ({ order_id }, ctx) => {
    const order = ORDERS[order_id.replace(/\D/g, "")];
    // Only the caller's own orders: the customer id came from onCallStart, not from the model.
    if (!order || order.customer !== ctx.call.variables.customer) {
      ctx.log.info({ order_id }, "no such order for this caller");
      return { status: "not one of your orders", eta: "unknown" };
    }
    return { status: order.status, eta: order.eta };
  },
});

export const hotline = defineAgent({
  systemPrompt:
    "You answer Acme Bikes' order hotline. Use lookup_order for any question about an order. " +
    "Answer in one or two short spoken sentences.",
  greeting: "Thanks for calling Acme Bikes, {{var.name}}. How can I help?",
  tools: [lookupOrder],
  onCallStart: (call) => {
    const customer = CUSTOMERS[call.from ?? ""];
    return { variables: { customer: customer?.id ?? "", name: customer?.name ?? "there" } };
  },
});
