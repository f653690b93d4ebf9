// A turn's record keeps what recovering its chat took: the hedges and fallbacks of the requests
// made under its signal, none when there were none.
import { expect, it } from "vitest";
import type { AgentTurnResult } from "../../../src/session/agent-turn.ts";
import {
  chatRecovery,
  noteRecovery,
  requestController,
} from "../../../src/session/resilience/request-signals.ts";
import { turnMetrics } from "../../../src/session/turn-metrics.ts";

const result: AgentTurnResult = {
  generated: "Nine.",
  heard: "Nine.",
  interrupted: false,
  cancelled: false,
  messages: [],
  toolCalls: [],
};

it("files a turn's hedged requests and fallbacks, counted through its requests' own signals", () => {
  const turn = new AbortController();
  const request = requestController(turn.signal);
  noteRecovery(request.signal, "hedgedRequests");
  noteRecovery(requestController(request.signal).signal, "fallbacks");
  const measured = { timings: {}, chatRequests: 1, chatRecovery: chatRecovery(turn.signal) };
  expect(turnMetrics(measured, undefined, result, undefined)).toEqual({
    chatRequests: 1,
    hedgedRequests: 1,
    fallbacks: 1,
  });
  const calm = { timings: {}, chatRequests: 1, chatRecovery: chatRecovery(new AbortController().signal) };
  expect(turnMetrics(calm, undefined, result, undefined)).toEqual({ chatRequests: 1 });
});
