// A call to the agent from this browser: the microphone and the speaker through an AudioWorklet
// (call-worklet.js), and the bridge over WS /browser/call, whose messages are defined in
// bridges/browser/protocol.ts: binary 16 kHz PCM both ways; JSON ready / clear / hangup / error
// from the bridge; played / dtmf / hangup from here.

const RATE = 16000;

/**
 * Starts a call. `on` hears: ready(callId), level(0..1), agentAudio(playing), cleared(droppedMs),
 * notice(text), ended(reason). Resolves once the microphone and audio are running and the socket
 * is opening; rejects with a sentence for the person when they cannot be.
 */
export async function callTheAgent(on) {
  if (!window.isSecureContext || !navigator.mediaDevices)
    throw new Error(
      "The microphone needs a secure page: open the console at http://localhost:… or over https.",
    );
  let media;
  try {
    media = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
    });
  } catch (err) {
    throw new Error(
      `No microphone: ${err.name === "NotAllowedError" ? "the browser was not allowed to use it" : err.message}.`,
    );
  }
  // The context runs at the call's rate: the browser resamples the microphone and the speaker.
  const ctx = new AudioContext({ sampleRate: RATE, latencyHint: "interactive" });
  const stopAudio = () => {
    for (const t of media.getTracks()) t.stop();
    void ctx.close();
  };
  let node;
  try {
    await ctx.audioWorklet.addModule("/console/call-worklet.js");
    node = new AudioWorkletNode(ctx, "call-audio", {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
    });
    ctx.createMediaStreamSource(media).connect(node);
    node.connect(ctx.destination);
    await ctx.resume();
  } catch (err) {
    stopAudio();
    throw new Error(`This browser cannot run the call's audio at 16 kHz (${err.message}).`);
  }

  const ws = new WebSocket(
    `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/browser/call${on.agent ? `?agent=${encodeURIComponent(on.agent)}` : ""}`,
  );
  ws.binaryType = "arraybuffer";
  let ready = false;
  let endedWith = "";
  const send = (m) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(m));
  };

  node.port.onmessage = ({ data: m }) => {
    if (m.type === "frame") {
      on.level(m.level);
      if (ready && ws.readyState === WebSocket.OPEN) ws.send(m.pcm);
    } else if (m.type === "played") send({ type: "played", epoch: m.epoch, ms: m.ms });
    else if (m.type === "playing") on.agentAudio(m.playing);
    else if (m.type === "cleared") on.cleared(m.droppedMs);
  };

  ws.onmessage = (e) => {
    if (typeof e.data !== "string") {
      const pcm = new Int16Array(e.data);
      node.port.postMessage({ type: "audio", pcm }, [pcm.buffer]);
      return;
    }
    const m = JSON.parse(e.data);
    if (m.type === "ready") {
      ready = true;
      on.ready(m.callId);
    } else if (m.type === "clear") node.port.postMessage({ type: "clear", epoch: m.epoch });
    else if (m.type === "hangup") endedWith = `The agent hung up (${m.reason}).`;
    else if (m.type === "error") on.notice(`The bridge refused a message: ${m.message}`);
  };
  ws.onclose = (e) => {
    stopAudio();
    on.ended(
      endedWith ||
        (e.code === 1000
          ? "Call ended."
          : e.code === 1006
            ? "Lost the connection to the bridge."
            : `Call ended (${e.code} ${e.reason}).`),
    );
  };

  return {
    hangUp() {
      endedWith ||= "You hung up.";
      send({ type: "hangup" });
      ws.close(1000, "hang-up");
    },
    dtmf(digit) {
      send({ type: "dtmf", digit });
    },
  };
}
