// What the scripted agent says next, decided from the conversation alone (deterministic): the
// greeting, a rule's reply or tool call, the answer to a tool result, a description of shown
// media, or the fallback. Audio parts arrive already transcribed (see engine.ts).
import type { ConvMessage, GenRequest, MediaPart } from "../../../generation/request.ts";
import type { Agent, CompiledRule } from "./agent.ts";
import { fill, fillDeep, normalizeHeard } from "./words.ts";

export interface Decision {
  /** Rule intent, or greeting / fallback / media / tool_result / ask:<intent>. */
  intent: string;
  /** What to say (may be empty when only a tool call is made). */
  text: string;
  toolCall?: { name: string; arguments: Record<string, unknown> };
  /** The caller's words as understood (transcripts included), for reasoning text. */
  heard: string;
}

/** Transcripts of the audio parts, by part. */
export type Transcripts = ReadonlyMap<MediaPart, string>;

export function decide(agent: Agent, req: GenRequest, transcripts: Transcripts = new Map()): Decision {
  const msgs = req.messages.filter((m) => m.role !== "system");
  const last = msgs[msgs.length - 1];
  if (!msgs.some((m) => m.role === "user")) return { intent: "greeting", text: agent.greeting, heard: "" };
  if (last?.role === "tool") return afterTool(agent, msgs);
  if (last?.role !== "user") return { intent: "fallback", text: agent.fallback, heard: "" };

  const heard = userWords(last, transcripts);
  const norm = normalizeHeard(heard);
  const offered = new Set(req.tools.map((t) => t.name));

  const pending = pendingAsk(agent, msgs);
  if (pending) {
    const slots = fillSlots(pending, norm);
    if (slots) return act(agent, pending, slots, offered, heard);
  }
  for (const rule of agent.rules) {
    if (!rule.whenRe.some((re) => re.test(norm))) continue;
    const slots = fillSlots(rule, norm);
    if (slots) return act(agent, rule, slots, offered, heard);
    return { intent: `ask:${rule.intent}`, text: rule.ask ?? agent.fallback, heard };
  }
  if (pending) return { intent: `ask:${pending.intent}`, text: pending.ask ?? agent.fallback, heard };
  const shown = describeMedia(agent, last, transcripts);
  if (shown) return { intent: "media", text: shown, heard };
  return { intent: "fallback", text: agent.fallback, heard };
}

function userWords(m: Extract<ConvMessage, { role: "user" }>, transcripts: Transcripts): string {
  const words: string[] = [];
  for (const p of m.parts) {
    if (p.type === "text") words.push(p.text);
    else if (p.type === "audio" && transcripts.get(p)) words.push(transcripts.get(p)!);
  }
  return words.join(" ").trim();
}

/** The rule whose `ask` was the assistant's last words, if any: the caller is answering it. */
function pendingAsk(agent: Agent, msgs: ConvMessage[]): CompiledRule | undefined {
  for (let i = msgs.length - 2; i >= 0; i--) {
    const m = msgs[i]!;
    if (m.role !== "assistant") continue;
    const said = m.text.trim();
    return agent.rules.find((r) => r.ask !== undefined && r.ask.trim() === said && r.slotRe.length > 0);
  }
  return undefined;
}

/** Slot values found in the caller's words, or undefined when one is missing. */
function fillSlots(rule: CompiledRule, norm: string): Record<string, string> | undefined {
  const slots: Record<string, string> = {};
  for (const [name, re] of rule.slotRe) {
    const m = re.exec(norm);
    if (!m) return undefined;
    const value = (m[1] ?? m[0]).trim();
    slots[name] = /^[\d\s-]+$/.test(value) ? value.replace(/\D/g, "") : value;
  }
  return slots;
}

function act(
  agent: Agent,
  rule: CompiledRule,
  slots: Record<string, string>,
  offered: ReadonlySet<string>,
  heard: string,
): Decision {
  if (rule.tool && offered.has(rule.tool.name)) {
    return {
      intent: rule.intent,
      text: fill(rule.reply ?? "", slots),
      toolCall: {
        name: rule.tool.name,
        arguments: fillDeep(rule.tool.arguments, slots) as Record<string, unknown>,
      },
      heard,
    };
  }
  const text = rule.tool
    ? (rule.without_tool ?? rule.reply ?? agent.fallback)
    : (rule.reply ?? agent.fallback);
  return { intent: rule.intent, text: fill(text, slots), heard };
}

/** The answer to the trailing tool results: the calling rule's after_tool, filled with the result. */
function afterTool(agent: Agent, msgs: ConvMessage[]): Decision {
  const result = msgs[msgs.length - 1] as Extract<ConvMessage, { role: "tool" }>;
  let call: { name: string; arguments: string } | undefined;
  for (let i = msgs.length - 1; i >= 0 && !call; i--) {
    const m = msgs[i]!;
    if (m.role === "assistant") call = m.toolCalls.find((c) => c.id === result.callId);
  }
  const rule = call && agent.rules.find((r) => r.tool?.name === call.name);
  if (!rule || rule.after_tool === undefined) {
    return { intent: "tool_result", text: agent.after_tool_default, heard: "" };
  }
  const vars: Record<string, unknown> = { result: parseJson(result.content) ?? result.content };
  const args = parseJson(call!.arguments);
  if (args && typeof args === "object") Object.assign(vars, args);
  return { intent: `tool_result:${rule.intent}`, text: fill(rule.after_tool, vars), heard: "" };
}

function describeMedia(
  agent: Agent,
  m: Extract<ConvMessage, { role: "user" }>,
  transcripts: Transcripts,
): string | undefined {
  const lines: string[] = [];
  for (const p of m.parts) {
    if (p.type === "text" || !p.resolved) continue;
    const r = p.resolved;
    const vars = {
      format: r.format.toUpperCase(),
      width: r.image?.width,
      height: r.image?.height,
      seconds: r.durationS === undefined ? undefined : Math.round(r.durationS * 10) / 10,
    };
    if (p.type === "image") lines.push(fill(agent.media.image, vars));
    else if (p.type === "video") lines.push(fill(agent.media.video, vars));
    else if (!transcripts.get(p)) lines.push(fill(agent.media.audio_unheard, vars));
  }
  return lines.length > 0 ? lines.join(" ") : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
