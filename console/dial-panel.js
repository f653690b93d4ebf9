// "Place a call": the agent (the one chosen beside "Call the agent") calls a number through the
// bridge's POST /calls; the call then shows in the live list like any other, marked Outbound.
const $ = (id) => document.getElementById(id);

export function setUpDial() {
  const form = $("dial");
  const status = $("dial-status");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const agent = $("agent-choice").value || undefined;
    const body = { to: $("dial-to").value.trim(), via: $("dial-via").value, ...(agent ? { agent } : {}) };
    status.textContent = "placing…";
    try {
      const res = await fetch("/calls", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = await res.json().catch(() => ({}));
      status.textContent =
        res.status === 202
          ? `placed ${answer.callId}`
          : (answer.error?.message ?? `refused (HTTP ${res.status})`);
      status.title = status.textContent;
    } catch (err) {
      status.textContent = `failed: ${err.message}`;
    }
  });
}
