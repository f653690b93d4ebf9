// The "Call the agent" button and the bar of a browser call in progress: the microphone's level,
// whether the agent's voice is playing, a keypad, hang-up. Its data-* attributes say the same for
// programs (the tests): state, agent-audio, clears, dropped-ms.
import { fmtMs, h } from "./dom.js";
import { callTheAgent } from "./phone.js";

const $ = (id) => document.getElementById(id);

/** Wires the button and the bar; `onCall(callId)` hears each call this page places, once it is set up. */
export function setUpPhone(onCall) {
  const panel = $("phone");
  const button = $("call-button");
  let call;
  let clears = 0;
  let droppedMs = 0;

  const show = (state, title, detail) => {
    panel.dataset.state = state;
    $("phone-title").textContent = title;
    $("phone-detail").textContent = detail;
  };
  const agentAudio = (state, text) => {
    panel.dataset.agentAudio = state;
    $("agent-audio").textContent = text;
  };

  // Each agent of the bridge can be called; with one agent there is nothing to choose.
  void fetch("/agents")
    .then((res) => (res.ok ? res.json() : { agents: [] }))
    .then(({ agents }) => {
      const choice = $("agent-choice");
      choice.replaceChildren(...agents.map((name) => h("option", { value: name }, name)));
      choice.hidden = agents.length < 2;
    })
    .catch(() => {});

  for (const d of ["1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "0", "#"])
    $("keypad").append(h("button", { type: "button", onclick: () => call?.dtmf(d), title: `press ${d}` }, d));

  const ended = (text) => {
    call = undefined;
    button.disabled = false;
    button.textContent = "Call the agent";
    show("ended", "Call ended", text);
    $("hang-up").textContent = "Close";
    agentAudio("silent", "Agent silent");
    $("mic-level").style.setProperty("width", "0%");
  };

  button.addEventListener("click", async () => {
    if (call) return;
    button.disabled = true;
    clears = 0;
    droppedMs = 0;
    panel.dataset.clears = "0";
    panel.dataset.droppedMs = "0";
    panel.hidden = false;
    $("hang-up").textContent = "Hang up";
    show("connecting", "Calling the agent…", "Allow the microphone when the browser asks.");
    try {
      call = await callTheAgent({
        agent: $("agent-choice").value || undefined,
        ready(callId) {
          show(
            "live",
            "On a call with the agent",
            "Speak when it has finished its greeting. Talk over it to interrupt.",
          );
          button.textContent = "On a call";
          onCall(callId);
        },
        level(level) {
          // Speech sits around 0.01–0.3 RMS: a square root spreads it over the meter.
          $("mic-level").style.setProperty("width", `${Math.min(100, Math.sqrt(level) * 180).toFixed(0)}%`);
        },
        agentAudio(playing) {
          if (playing) agentAudio("playing", "Agent speaking");
          else if (panel.dataset.agentAudio === "playing") agentAudio("silent", "Agent silent");
        },
        cleared(ms) {
          clears++;
          droppedMs += ms;
          panel.dataset.clears = String(clears);
          panel.dataset.droppedMs = String(Math.round(droppedMs));
          agentAudio("cut", ms > 0 ? `Agent cut off: ${fmtMs(ms)} of its voice dropped` : "Agent cut off");
        },
        notice(text) {
          $("phone-detail").textContent = text;
        },
        ended,
      });
    } catch (err) {
      ended(err.message);
    }
  });
  $("hang-up").addEventListener("click", () => {
    if (call) call.hangUp();
    else panel.hidden = true;
  });
}
