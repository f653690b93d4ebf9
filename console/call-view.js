// One call on screen: its header, its transcript (the record's events as they come), what is
// forming at the end of it (the caller speaking, the words heard, the agent's reply as it is
// written), and for an ended call its recording.
import { directionBadge, fmtDuration, fmtMs, fmtTime, h, transportBadge } from "./dom.js";
import { speedClass, waterfall } from "./waterfall.js";

const who = (name, ...rest) => h("div", { class: "who" }, h("strong", {}, name), ...rest);
const tag = (text, cls = "") => h("span", { class: `tag ${cls}` }, text);
const time = (iso) => h("time", { datetime: iso }, fmtTime(iso));
const sys = (kind, ...text) => h("li", { class: `sys ${kind}` }, ...text);

function callerTurn(e) {
  return h(
    "li",
    { class: "turn caller", dataset: { role: "caller" } },
    who(e.speaker ?? "Caller", e.source === "dtmf" ? tag("keypad") : null, time(e.at)),
    h("p", { class: "words" }, e.text),
  );
}

function toolList(calls) {
  if (!calls.length) return null;
  return h(
    "ul",
    { class: "tools" },
    calls.map((c) =>
      h("li", {}, h("span", { class: "tool-icon" }, "tool"), h("code", {}, `${c.name}(${c.arguments})`)),
    ),
  );
}

function agentTurn(e) {
  const m = e.metrics ?? {};
  // What the model wrote but the caller never heard: the agent was cut off there (the heard
  // text ends in "…" when the cut fell inside a sentence).
  const heard = e.heard.replace(/…$/, "");
  const unheard = e.interrupted && e.generated.startsWith(heard) ? e.generated.slice(heard.length) : "";
  const v2v = m.voiceToVoiceMs;
  return h(
    "li",
    {
      class: `turn agent${e.interrupted ? " interrupted" : ""}${e.error ? " failed" : ""}`,
      dataset: { role: "agent", interrupted: String(e.interrupted) },
    },
    who(
      "Agent",
      e.interrupted ? tag("interrupted", "warn") : null,
      e.error ? tag("fault", "bad") : null,
      v2v !== undefined ? tag(`answered in ${fmtMs(v2v)}`, `speed ${speedClass(v2v)}`) : null,
      time(e.at),
    ),
    h(
      "p",
      { class: "words" },
      (unheard ? heard : e.heard) || (e.interrupted ? h("em", {}, "(cut off before a word was heard)") : ""),
      unheard
        ? h(
            "span",
            { class: "unheard", title: "written by the model, never heard: the caller cut in" },
            unheard,
          )
        : null,
    ),
    unheard
      ? h("p", { class: "hint" }, "Struck through: written by the model, never heard by the caller.")
      : null,
    e.interrupted && !unheard && e.generated && e.generated !== e.heard
      ? h("p", { class: "generated" }, h("b", {}, "Written: "), e.generated)
      : null,
    toolList(e.toolCalls ?? []),
    e.error ? h("p", { class: "error" }, e.error) : null,
    waterfall(m),
    m.bargeInMs !== undefined
      ? h(
          "p",
          { class: "barge-ms" },
          `Fell silent ${fmtMs(m.bargeInMs)} after the caller began talking over it.`,
        )
      : null,
  );
}

/** One record event as a transcript item. */
export function eventItem(e) {
  switch (e.type) {
    case "call-start":
      return sys("start", `Call started at ${fmtTime(e.at)}`);
    case "user":
      return callerTurn(e);
    case "assistant":
      return agentTurn(e);
    case "barge-in":
      return sys(
        "barge",
        e.outcome === "interrupted"
          ? "The caller talked over the agent: it stopped and listened."
          : "The caller spoke over the agent briefly: it paused, then went on.",
      );
    case "note":
      return sys("note", e.text);
    case "call-end":
      return sys("end", `Call ended after ${fmtDuration(e.durationMs)}: ${e.reason}`);
    default:
      return null;
  }
}

const dots = () => h("span", { class: "dots", "aria-hidden": "true" }, h("i"), h("i"), h("i"));

/** What is forming, as provisional transcript items (dashed), newest last. */
export function formingItems(f) {
  const items = [];
  const c = f.caller;
  if (c) {
    const body =
      c.kind === "caller-speaking"
        ? [h("p", { class: "words muted" }, "speaking", dots())]
        : c.kind === "caller-recognizing"
          ? [h("p", { class: "words muted" }, "recognizing", dots())]
          : c.kind === "caller-heard"
            ? [
                h("p", { class: "words" }, c.text),
                h(
                  "p",
                  { class: "hint" },
                  `recognized in ${fmtMs(c.asrMs)}, not a turn until the agent answers it`,
                ),
              ]
            : [h("p", { class: "words" }, `pressed ${c.digit} on the keypad`)];
    items.push(
      h(
        "li",
        { class: "turn caller forming", dataset: { role: "caller", state: c.kind } },
        who("Caller", tag("live")),
        ...body,
      ),
    );
  }
  const r = f.reply;
  if (r || f.tools.length) {
    const speaking = f.audio === "playing";
    const words =
      r?.kind === "agent-text"
        ? h("p", { class: "words" }, r.text)
        : h("p", { class: "words muted" }, "thinking", dots());
    items.push(
      h(
        "li",
        { class: "turn agent forming", dataset: { role: "agent", state: speaking ? "speaking" : "writing" } },
        who("Agent", tag(speaking ? "speaking" : r?.kind === "agent-text" ? "writing" : "thinking", "live")),
        words,
        toolList(f.tools),
      ),
    );
  }
  if (f.audio === "cleared")
    items.push(
      sys("cut", "Agent audio cut off: the caller started talking, the rest of its words were dropped."),
    );
  return items;
}

/** The call's header: what carries it, who, when, and whether it is still going. */
export function callHeader(call) {
  const start = call.events.find((e) => e.type === "call-start");
  const end = call.events.find((e) => e.type === "call-end");
  const since = start ? Date.parse(start.at) : Date.now();
  return h(
    "div",
    { class: "call-head" },
    h(
      "div",
      { class: "call-title" },
      transportBadge(start?.transport ?? "?"),
      directionBadge(start?.direction),
      h("span", { class: "parties" }, start?.from ?? "unknown caller", start?.to ? ` → ${start.to}` : ""),
      start?.agent
        ? h(
            "span",
            { class: "agent-tag", dataset: { agent: start.agent }, title: "the agent that took the call" },
            start.agent,
          )
        : "",
      end
        ? h("span", { class: "state ended" }, `ended · ${fmtDuration(end.durationMs)}`)
        : h(
            "span",
            { class: "state live" },
            h("i", { class: "pulse" }),
            "live ",
            h("span", { dataset: { since } }, fmtDuration(Date.now() - since)),
          ),
    ),
    h(
      "div",
      { class: "call-meta" },
      start ? `started ${fmtTime(start.at)}` : "",
      end ? ` · ${end.reason}` : "",
      h("code", { class: "call-id" }, call.callId),
    ),
    analysisView(call.events.findLast((e) => e.type === "analysis")?.analysis),
  );
}

/** The post-call analysis: its summary and fields, or why it failed. */
function analysisView(a) {
  if (!a) return "";
  if (a.status === "failed")
    return h(
      "div",
      { class: "analysis failed", dataset: { status: "failed" } },
      `Analysis failed: ${a.error}`,
    );
  return h(
    "div",
    { class: "analysis", dataset: { status: "done" } },
    a.summary ? h("p", { class: "summary" }, a.summary) : "",
    h(
      "dl",
      {},
      ...Object.entries(a.fields).flatMap(([k, v]) => [
        h("dt", {}, k),
        h("dd", {}, v === null ? "—" : String(v)),
      ]),
    ),
  );
}
