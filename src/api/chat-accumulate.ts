// Folds E1 stream chunks into the completion a non-streaming call would have returned: content,
// reasoning (both spellings), tool calls assembled from argument fragments, and the last usage.
import type { Accumulator } from "./stream.ts";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessage,
  ChatUsage,
  ToolCall,
  ToolCallDelta,
} from "./types/chat.ts";

interface ChoiceState {
  content: string;
  reasoning: string | undefined;
  reasoningContent: string | undefined;
  calls: ToolCall[];
  /** Position in `calls` of each wire `index`. */
  byIndex: Map<number, number>;
  finish: string;
}

export class ChatAccumulator implements Accumulator<ChatCompletionChunk, ChatCompletion> {
  private id = "";
  private model = "";
  private created = 0;
  private usage: ChatUsage | undefined;
  private readonly choices = new Map<number, ChoiceState>();

  add(chunk: ChatCompletionChunk): void {
    this.id ||= chunk.id;
    this.model ||= chunk.model;
    this.created ||= chunk.created;
    if (chunk.usage) this.usage = chunk.usage; // cumulative: the last one is the total
    for (const c of chunk.choices ?? []) {
      const st = this.choice(c.index ?? 0);
      const d = c.delta ?? {};
      if (d.content) st.content += d.content;
      if (d.reasoning) st.reasoning = (st.reasoning ?? "") + d.reasoning;
      if (d.reasoning_content) st.reasoningContent = (st.reasoningContent ?? "") + d.reasoning_content;
      for (const tc of d.tool_calls ?? []) this.addToolCall(st, tc);
      if (c.finish_reason) st.finish = c.finish_reason;
    }
  }

  /** Text content so far of choice 0. */
  get content(): string {
    return this.choices.get(0)?.content ?? "";
  }

  result(): ChatCompletion {
    const indexes = [...this.choices.keys()].sort((a, b) => a - b);
    return {
      id: this.id,
      object: "chat.completion",
      model: this.model,
      created: this.created,
      choices: indexes.map((index) => {
        const st = this.choices.get(index)!;
        const message: ChatCompletionMessage = { role: "assistant", content: st.content };
        if (st.reasoning !== undefined) message.reasoning = st.reasoning;
        if (st.reasoningContent !== undefined) message.reasoning_content = st.reasoningContent;
        if (st.calls.length > 0)
          message.tool_calls = st.calls.map((c) => ({ ...c, function: { ...c.function } }));
        return { index, message, finish_reason: st.finish };
      }),
      usage: this.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    };
  }

  private choice(index: number): ChoiceState {
    let st = this.choices.get(index);
    if (!st) {
      st = {
        content: "",
        reasoning: undefined,
        reasoningContent: undefined,
        calls: [],
        byIndex: new Map(),
        finish: "",
      };
      this.choices.set(index, st);
    }
    return st;
  }

  private addToolCall(st: ChoiceState, tc: ToolCallDelta): void {
    // Which call does this fragment continue? By wire index, else by id, else the last one;
    // a fragment naming a new index or id starts a new call.
    let pos: number | undefined;
    if (tc.index !== undefined) pos = st.byIndex.get(tc.index);
    else if (tc.id) pos = st.calls.findIndex((c) => c.id === tc.id);
    else pos = st.calls.length - 1;
    if (pos === undefined || pos < 0) {
      pos = st.calls.push({ id: tc.id ?? "", type: "function", function: { name: "", arguments: "" } }) - 1;
      if (tc.index !== undefined) st.byIndex.set(tc.index, pos);
    }
    const call = st.calls[pos]!;
    if (tc.id && !call.id) call.id = tc.id;
    if (tc.function?.name && !call.function.name) call.function.name = tc.function.name;
    if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
  }
}
