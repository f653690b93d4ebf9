// The console: the live feed (WS /console/live, messages defined in src/console/live-events.ts),
// the lists of live and ended calls, the campaigns, the call on screen, the latency table and the
// browser call.
import { callHeader, eventItem, formingItems } from "./call-view.js";
import { refreshCampaigns } from "./campaigns.js";
import { setUpDial } from "./dial-panel.js";
import { directionBadge, fmtDuration, fmtTime, h, transportBadge } from "./dom.js";
import { refreshLatency } from "./latency.js";
import { setUpPhone } from "./phone-panel.js";
import { refreshTrunks } from "./trunks.js";

const $ = (id) => document.getElementById(id);

/** Live calls by id: their record events so far and what is forming. */
const live = new Map();
/** The call on screen: { callId, events, live } (a live call's entry, or an ended call's record). */
let shown;
/** The next page of ended calls (GET /calls cursor), null when there is none. */
let endedCursor = null;
/** A call to show as soon as it starts: the one this page just placed. */
let wanted;

const emptyForming = () => ({ caller: null, reply: null, tools: [], audio: null });

// ---- the live feed ----------------------------------------------------------------------

function connectFeed(retryMs = 500) {
  const ws = new WebSocket(
    `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/console/live`,
  );
  let opened = false;
  ws.onopen = () => {
    opened = true;
    setFeed("live", "live");
  };
  ws.onmessage = (e) => onFeed(JSON.parse(e.data));
  ws.onclose = () => {
    setFeed("offline", "reconnecting…");
    const next = opened ? 500 : Math.min(10_000, retryMs * 2);
    setTimeout(() => connectFeed(next), next);
  };
}

function setFeed(state, text) {
  $("feed").dataset.state = state;
  $("feed").textContent = text;
}

function onFeed(m) {
  if (m.type === "hello") {
    live.clear();
    for (const c of m.calls) {
      const call = {
        callId: c.callId,
        instance: c.instance,
        events: c.events,
        forming: emptyForming(),
        live: true,
      };
      for (const a of c.forming) applyActivity(call.forming, a);
      live.set(c.callId, call);
    }
    renderLiveList();
    if (shown?.live) {
      const again = live.get(shown.callId);
      if (again) show(again);
      else void openRecord(shown.callId);
    } else if (!shown && live.size) show(live.values().next().value);
    void refreshEnded();
    void refreshLatency();
    void refreshTrunks();
    void showCampaigns();
  } else if (m.type === "event") onEvent(m.callId, m.event, m.instance);
  else if (m.type === "activity") onActivity(m.callId, m.activity);
}

function onEvent(callId, event, instance) {
  // The analysis comes once the call is over: it belongs to the call on screen, if that is the one.
  if (event.type === "analysis") {
    if (shown?.callId === callId) {
      shown.events.push(event);
      $("call-head").replaceChildren(callHeader(shown));
    }
    void refreshEnded();
    return;
  }
  if (event.type === "call-start")
    live.set(callId, { callId, instance, events: [], forming: emptyForming(), live: true });
  const call = live.get(callId);
  if (!call) return;
  call.events.push(event);
  const f = call.forming;
  if (event.type === "user") f.caller = null;
  if (event.type === "assistant") {
    f.reply = null;
    f.tools = [];
    if (f.audio === "cleared") f.audio = null;
    void refreshLatency();
  }
  if (event.type === "call-end") {
    live.delete(callId);
    call.live = false;
    call.forming = emptyForming();
    void refreshEnded();
  }
  renderLiveList();
  if (event.type === "call-start" && (!shown || wanted === callId)) {
    wanted = undefined;
    show(call);
    return;
  }
  if (shown === call) {
    const item = eventItem(event);
    if (item) $("transcript").append(item);
    renderForming(call);
    if (event.type === "call-start" || event.type === "call-end")
      $("call-head").replaceChildren(callHeader(call));
    // The recording is complete about a second after the call (its last stretch is flushed then).
    if (event.type === "call-end") setTimeout(() => void showRecording(callId), 1500);
  }
}

function onActivity(callId, a) {
  const call = live.get(callId);
  if (!call) return;
  applyActivity(call.forming, a);
  renderLiveList();
  if (shown === call) renderForming(call);
}

function applyActivity(f, a) {
  switch (a.kind) {
    case "caller-speaking":
    case "caller-recognizing":
    case "caller-heard":
    case "dtmf":
      f.caller = a;
      break;
    case "caller-dropped":
      f.caller = null;
      break;
    case "agent-thinking":
      if (f.reply?.kind !== "agent-text") f.reply = a;
      break;
    case "agent-text":
      f.reply = a;
      break;
    case "agent-text-end":
      if (f.reply?.kind === "agent-text" && f.reply.draft === a.draft) {
        f.reply = null;
        f.tools = [];
      }
      break;
    case "agent-tool":
      f.tools.push(a);
      break;
    case "agent-audio":
      f.audio = a.state === "idle" ? null : a.state;
      break;
  }
}

// ---- the call on screen -----------------------------------------------------------------

function show(call) {
  shown = call;
  $("welcome").hidden = true;
  $("call").hidden = false;
  $("recording").hidden = true;
  $("recording").querySelector("audio")?.remove();
  $("call-head").replaceChildren(callHeader(call));
  $("transcript").replaceChildren(...call.events.map(eventItem).filter(Boolean));
  renderForming(call);
  markSelected();
  if (!call.live) void showRecording(call.callId);
}

function renderForming(call) {
  for (const el of $("transcript").querySelectorAll(".forming, .sys.cut")) el.remove();
  if (call.live) $("transcript").append(...formingItems(call.forming));
}

async function openRecord(callId) {
  const res = await fetch(`/calls/${encodeURIComponent(callId)}`);
  if (!res.ok) return;
  const record = await res.json();
  show({ callId, events: record.events, forming: emptyForming(), live: false });
}

async function showRecording(callId) {
  if (shown?.callId !== callId) return;
  const url = `/calls/${encodeURIComponent(callId)}/recording`;
  const res = await fetch(url, { method: "HEAD" });
  if (!res.ok || shown?.callId !== callId) return;
  $("recording").querySelector("audio")?.remove();
  $("recording").append(h("audio", { controls: true, preload: "metadata", src: url }));
  $("recording").hidden = false;
}

// ---- the lists ----------------------------------------------------------------------------

/** A line saying what is happening in a live call right now. */
function liveLine(call) {
  const f = call.forming;
  if (f.caller?.kind === "caller-speaking") return "Caller speaking…";
  if (f.caller?.kind === "caller-recognizing") return "Recognizing the caller's words…";
  if (f.reply?.kind === "agent-text") return `Agent: ${f.reply.text}`;
  if (f.reply?.kind === "agent-thinking") return "Agent thinking…";
  if (f.caller?.kind === "caller-heard") return `Caller: ${f.caller.text}`;
  const last = call.events.findLast((e) => e.type === "user" || e.type === "assistant");
  if (!last) return "Starting…";
  return last.type === "user" ? `Caller: ${last.text}` : `Agent: ${last.heard}`;
}

function renderLiveList() {
  const items = [...live.values()].map((call) => {
    const start = call.events.find((e) => e.type === "call-start");
    const since = start ? Date.parse(start.at) : Date.now();
    return h(
      "li",
      {
        class: "call-item",
        dataset: { callId: call.callId, transport: start?.transport ?? "", instance: call.instance ?? "" },
        onclick: () => show(call),
      },
      h(
        "div",
        { class: "row" },
        transportBadge(start?.transport ?? "?"),
        directionBadge(start?.direction),
        h(
          "span",
          { class: "from" },
          start?.direction === "outbound" ? `→ ${start.to ?? call.callId}` : (start?.from ?? call.callId),
        ),
        h("span", { class: "elapsed", dataset: { since } }, fmtDuration(Date.now() - since)),
      ),
      h("div", { class: "line" }, liveLine(call)),
      // Several bridges on one database: which one has the call.
      call.instance
        ? h("div", { class: "instance", title: "the bridge taking this call" }, call.instance)
        : "",
    );
  });
  $("live-list").replaceChildren(...items);
  $("live-count").textContent = String(live.size);
  $("live-empty").hidden = live.size > 0;
  markSelected();
}

function endedItem(c) {
  const ms = c.endedAt ? Date.parse(c.endedAt) - Date.parse(c.startedAt) : 0;
  return h(
    "li",
    {
      class: "call-item ended",
      dataset: { callId: c.callId, transport: c.transport },
      onclick: () => void openRecord(c.callId),
    },
    h(
      "div",
      { class: "row" },
      transportBadge(c.transport),
      directionBadge(c.direction),
      h(
        "span",
        { class: "from" },
        c.direction === "outbound" ? `→ ${c.to ?? c.callId}` : (c.from ?? c.callId),
      ),
      h("span", { class: "elapsed" }, fmtDuration(ms)),
    ),
    h(
      "div",
      { class: "line" },
      `${fmtTime(c.startedAt)}${c.agent ? ` · ${c.agent}` : ""} · ${c.turns} turns · ${(c.outcome ?? "").replaceAll("_", " ")}${c.dialOutcome ? ` · ${c.dialOutcome}` : ""}`,
    ),
    c.instance ? h("div", { class: "instance", title: "the bridge that took this call" }, c.instance) : "",
  );
}

/** The ended-calls filters as GET /calls takes them (empty fields left out; dates as UTC days). */
function endedQuery() {
  const params = new URLSearchParams({ limit: "15" });
  for (const el of $("ended-filters").elements) {
    if (!el.name || !el.value.trim()) continue;
    // `until` is a day: calls of that day included.
    const value =
      el.name === "until"
        ? new Date(Date.parse(el.value) + 86_400_000).toISOString().slice(0, 10)
        : el.value.trim();
    params.set(el.name, value);
  }
  return params;
}

/** Each refresh supersedes the one before (typing in the search box sends one per pause). */
let endedRequest = 0;

async function refreshEnded(more = false) {
  const params = endedQuery();
  if (more && endedCursor) params.set("cursor", endedCursor);
  const mine = ++endedRequest;
  const res = await fetch(`/calls?${params}`);
  if (mine !== endedRequest) return;
  $("ended-error").hidden = true;
  if (!res.ok) {
    const answer = await res.json().catch(() => undefined);
    if (res.status === 400) {
      $("ended-error").textContent = answer?.error?.message ?? "Bad filter.";
      $("ended-error").hidden = false;
      return;
    }
    $("ended-empty").textContent =
      res.status === 401
        ? "Needs the bridge's token: open the address the bridge printed."
        : `Could not list calls (${res.status}).`;
    return;
  }
  const page = await res.json();
  endedCursor = page.next_cursor;
  const filtered =
    [...params.keys()].some((k) => k !== "limit" && k !== "cursor" && k !== "outcome") ||
    params.get("outcome") !== "ended";
  $("ended-empty").textContent = filtered ? "No call matches." : "None yet.";
  const items = page.calls.filter((c) => c.endedAt).map(endedItem);
  if (more) $("ended-list").append(...items);
  else $("ended-list").replaceChildren(...items);
  $("ended-empty").hidden = $("ended-list").children.length > 0;
  $("ended-more").hidden = !endedCursor;
  markSelected();
}

function markSelected() {
  for (const el of document.querySelectorAll(".call-item"))
    el.classList.toggle("selected", el.dataset.callId === shown?.callId);
}

function showCampaigns() {
  return refreshCampaigns((callId) => void openRecord(callId)).then(markSelected);
}

// Campaigns move on while nobody looks: read again every 5 s.
setInterval(() => void showCampaigns(), 5000);

// Registrations change on their own (refreshes, a registrar going away): looked at every 10 s.
setInterval(() => void refreshTrunks(), 10_000);

// Live durations tick once a second.
setInterval(() => {
  for (const el of document.querySelectorAll("[data-since]"))
    el.textContent = fmtDuration(Date.now() - Number(el.dataset.since));
}, 1000);

$("ended-more").addEventListener("click", () => void refreshEnded(true));
let typing;
$("ended-filters").addEventListener("input", () => {
  clearTimeout(typing);
  typing = setTimeout(() => void refreshEnded(), 300);
});
$("ended-filters").addEventListener("submit", (e) => {
  e.preventDefault();
  void refreshEnded();
});
setUpDial();
setUpPhone((callId) => {
  const call = live.get(callId);
  if (call) show(call);
  else wanted = callId;
});
connectFeed();
