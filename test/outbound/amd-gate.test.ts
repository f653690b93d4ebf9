// The gate between an answered call and its session: a callee that stops sending audio after its
// "Hello?" (silence suppression) is still heard as a person waiting; the session, once attached,
// gets the audio from then on and not the greeting the detector already heard.
import { describe, expect, it } from "vitest";
import { AmdGate } from "../../src/outbound/amd-gate.ts";
import type { CallTransport, TransportListener } from "../../src/session/transport.ts";
import { speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";

const RATE = 8000;

/** The transport port as a callee's line: frames pushed by the test. */
function line() {
  let listener: TransportListener | undefined;
  const transport: CallTransport = {
    info: { callId: "out-t", transport: "test", params: {} },
    inputRate: RATE,
    output: { kind: "pcm", rate: RATE },
    attach: (l) => {
      listener = l;
    },
    play: () => {},
    clear: () => {},
    queuedMs: () => 0,
    playedMs: () => 0,
    hangUp: async () => {},
    transfer: async () => {},
  };
  const send = (pcm: Int16Array) => {
    for (let i = 0; i + 160 <= pcm.length; i += 160) listener!.audio(pcm.slice(i, i + 160));
  };
  return { transport, send };
}

describe("AmdGate", () => {
  it("hears a person through a silent gap with no frames, then passes later audio to the session", async () => {
    const { transport, send } = line();
    const decided: string[] = [];
    const gate = new AmdGate(transport, {
      decided: (result) => decided.push(result),
      cue: () => {},
      ended: () => {},
    });
    send(speak("Hello?", { rate: RATE }));
    expect(decided).toEqual([]);
    await until(() => decided.length > 0, "the verdict", 1300);
    expect(decided).toEqual(["human"]);
    const heard: number[] = [];
    gate.attach({
      audio: (f) => heard.push(f.length),
      dtmf: () => {},
      played: () => {},
      ended: () => {},
    });
    send(new Int16Array(320));
    expect(heard).toEqual([160, 160]);
  });

  it("does not take an event-loop stall for silence: the frames that came meanwhile are the time", async () => {
    const { transport, send } = line();
    const gate = new AmdGate(transport, { decided: () => {}, cue: () => {}, ended: () => {} });
    const greeting = speak("Hi, you have reached Morgan. Please leave a message after the tone.", {
      rate: RATE,
    });
    const ms = (n: number) => (n / RATE) * 1000;
    send(greeting.subarray(0, 8000));
    // The loop is blocked for 600 ms while 600 ms of the greeting arrive; they are read after the
    // timers due meanwhile have run, as a socket's are.
    const blockedUntil = performance.now() + 600;
    while (performance.now() < blockedUntil) {}
    const arrived = new Promise<void>((resolve) =>
      setTimeout(() => {
        send(greeting.subarray(8000, 8000 + 4800));
        resolve();
      }, 0),
    );
    await arrived;
    expect(gate.elapsedMs).toBeCloseTo(ms(8000 + 4800), 0);
    gate.attach({ audio: () => {}, dtmf: () => {}, played: () => {}, ended: () => {} });
  });

  it("a key press before the decision is a person", () => {
    const { transport } = line();
    const decided: string[] = [];
    let listener: TransportListener | undefined;
    const t: CallTransport = { ...transport, attach: (l) => (listener = l) };
    new AmdGate(t, { decided: (r) => decided.push(r), cue: () => {}, ended: () => {} });
    listener!.dtmf("5");
    expect(decided).toEqual(["human"]);
    listener!.ended("done");
  });
});
