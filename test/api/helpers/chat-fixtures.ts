// The smallest chat completion request and its answer, for tests of the request core itself.
import type { ChatCompletion } from "../../../src/api/types/index.ts";

export const completion: ChatCompletion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  model: "svc-3.5-flash",
  created: 1,
  choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

export const req = { model: "svc-3.5-flash", messages: [{ role: "user" as const, content: "hello" }] };
