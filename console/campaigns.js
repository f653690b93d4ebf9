// The campaigns (GET /campaigns): each one's progress (rows finished of all, counts by status)
// and, in a fold closed until opened, its latest calls (GET /campaigns/:id/calls), each opening
// its record like an ended call. The section stays hidden while the bridge has no campaign, or
// serves none (campaigns.enabled: false).
import { fmtTime, h } from "./dom.js";

const FINISHED = ["done", "skipped", "canceled"];
const STATUSES = ["done", "skipped", "canceled", "dialing", "pending"];
/** Campaigns whose fold is open: their calls are read again at each refresh. */
const unfolded = new Set();

/** Reads the campaigns again; `openCall(callId)` shows a call's record. */
export async function refreshCampaigns(openCall) {
  const section = document.getElementById("campaigns");
  const res = await fetch("/campaigns").catch(() => undefined);
  if (!res?.ok) {
    section.hidden = true;
    return;
  }
  const { campaigns } = await res.json();
  section.hidden = campaigns.length === 0;
  const items = await Promise.all(campaigns.map((c) => campaignItem(c, openCall)));
  document.getElementById("campaign-list").replaceChildren(...items);
}

async function campaignItem(c, openCall) {
  const { rows, byStatus, attempts } = c.counts;
  const finished = FINISHED.reduce((n, s) => n + (byStatus[s] ?? 0), 0);
  const calls = h("ul", { class: "call-list campaign-calls", "aria-label": `calls of ${c.name}` });
  const fold = h(
    "details",
    {
      ontoggle: (e) => {
        if (e.target.open) {
          unfolded.add(c.id);
          void fillCalls(c.id, calls, openCall);
        } else unfolded.delete(c.id);
      },
    },
    h("summary", {}, `Calls (${attempts})`),
    calls,
  );
  if (unfolded.has(c.id)) {
    fold.open = true;
    await fillCalls(c.id, calls, openCall);
  }
  return h(
    "li",
    { class: "campaign", dataset: { campaignId: c.id, status: c.status } },
    h(
      "div",
      { class: "row" },
      h("span", { class: "name", title: c.id }, c.name),
      h("span", { class: `badge c-${c.status}` }, c.status),
    ),
    h(
      "div",
      {
        class: "progress",
        role: "progressbar",
        "aria-valuemin": 0,
        "aria-valuemax": rows,
        "aria-valuenow": finished,
        title: `${finished} of ${rows} rows finished`,
      },
      h("span", { style: { width: `${rows ? (finished / rows) * 100 : 0}%` } }),
    ),
    h(
      "div",
      { class: "line" },
      [
        `${finished}/${rows}`,
        ...STATUSES.filter((s) => byStatus[s]).map((s) => `${byStatus[s]} ${s}`),
        `${attempts} calls`,
      ].join(" · "),
    ),
    c.pausedReason ? h("div", { class: "detail" }, c.pausedReason) : "",
    fold,
  );
}

async function fillCalls(id, list, openCall) {
  const res = await fetch(`/campaigns/${encodeURIComponent(id)}/calls?limit=50`).catch(() => undefined);
  if (!res?.ok) return;
  const { calls } = await res.json();
  list.replaceChildren(
    ...calls.map((a) =>
      h(
        "li",
        {
          class: `call-item campaign-call${a.callId ? "" : " unplaced"}`,
          dataset: { callId: a.callId ?? "", outcome: a.outcome ?? "" },
          onclick: a.callId ? () => openCall(a.callId) : undefined,
        },
        h(
          "div",
          { class: "row" },
          h("span", { class: "from" }, `→ ${a.number}`),
          h("span", { class: "elapsed" }, `#${a.attempt}`),
        ),
        h(
          "div",
          { class: "line" },
          `${fmtTime(a.startedAt)} · ${a.outcome ?? (a.endedAt ? "ended" : "in progress")}`,
        ),
      ),
    ),
  );
  if (calls.length === 0) list.replaceChildren(h("li", { class: "empty" }, "No call yet."));
}
