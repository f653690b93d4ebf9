// Building the page's elements from data: text always goes in as text, never as HTML, since
// transcripts, tool arguments and caller ids come from outside.

/**
 * An element: `h("li", { class: "turn", dataset: { role: "user" } }, "text", child)`.
 * Props: class, dataset, style (an object of CSS properties), on<event> handlers, other attributes.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style") for (const [p, v] of Object.entries(value)) el.style.setProperty(p, v);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** "612 ms", "1.4 s". */
export function fmtMs(ms) {
  if (ms === undefined || ms === null) return "—";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

/** "1:05" (minutes:seconds), "1:02:05". */
export function fmtDuration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor(s / 60) % 60;
  const seconds = String(s % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/** The local time of an ISO timestamp, "14:03:27"; with the date when it is not today. */
export function fmtTime(iso) {
  const d = new Date(iso);
  const time = d.toLocaleTimeString([], {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hour12: false,
  });
  return d.toDateString() === new Date().toDateString()
    ? time
    : `${d.toLocaleDateString([], { month: "short", day: "numeric" })} ${time}`;
}

const TRANSPORTS = {
  twilio: "Twilio",
  sip: "SIP",
  discord: "Discord",
  audiosocket: "AudioSocket",
  browser: "Browser",
  test: "Test",
};

/** A call the bridge placed (POST /calls) is marked, and names whom it called. */
export function directionBadge(direction) {
  return direction === "outbound"
    ? h("span", { class: "badge outbound", title: "placed by the bridge" }, "Outbound")
    : "";
}

/** A coloured label naming what carries the call. */
export function transportBadge(transport) {
  return h("span", { class: `badge t-${transport}` }, TRANSPORTS[transport] ?? transport);
}
