// The SIP registrations (trunks and PBX extensions the bridge registers with) and their state, from
// GET /readyz; the section stays hidden when the bridge registers nowhere.
import { h } from "./dom.js";

const LABELS = {
  registered: "registered",
  registering: "registering…",
  failed: "failed",
  unregistered: "unregistered",
};

export async function refreshTrunks() {
  const res = await fetch("/readyz").catch(() => undefined);
  if (!res) return;
  const body = await res.json().catch(() => ({}));
  const registrations = body.sip?.registrations ?? [];
  const section = document.getElementById("trunks");
  section.hidden = registrations.length === 0;
  document
    .getElementById("trunk-list")
    .replaceChildren(
      ...registrations.map((r) =>
        h(
          "li",
          { class: `trunk ${r.state}`, "data-state": r.state, title: r.detail ?? "" },
          h("span", { class: "aor" }, r.aor.replace(/^sips?:/, "")),
          " ",
          h("span", { class: "state" }, LABELS[r.state] ?? r.state),
          r.state === "registered" && r.expiresS ? h("small", {}, ` · ${r.expiresS} s`) : "",
          r.detail && r.state !== "registered" ? h("div", { class: "detail" }, r.detail) : "",
        ),
      ),
    );
}
