// E5 WebSocket /v1/realtime/audio?model=… (and /svc_plan/v1/realtime/audio): the bearer key and the
// model are checked on the handshake (a refused handshake gets an HTTP status and JSON error); each
// connection then runs one RealtimeTtsSession.

import { API_PREFIX, PATHS, PLAN_PREFIX } from "../../api/types/paths.ts";
import { TTS_WS_MODELS } from "../../api/types/tts-ws.ts";
import { cutAfterFirstAudio } from "../conditions/index.ts";
import type { ServiceRoute } from "../context.ts";
import { badParam } from "../errors.ts";
import { acquireSpeechEngines, clonedVoicesOf } from "../speech/engines.ts";
import type { WsContext } from "../ws.ts";
import { RealtimeTtsSession } from "./realtime-session.ts";

/** Sessions served at once by this process; beyond it a connection gets a 503 error event. */
const MAX_SESSIONS = 2000;

function modelOf(ctx: WsContext): string {
  const model = ctx.url.searchParams.get("model");
  if (!model) throw badParam("model", `query parameter required: one of ${TTS_WS_MODELS.join(", ")}`);
  if (!(TTS_WS_MODELS as readonly string[]).includes(model)) {
    throw badParam("model", `unknown model "${model}"; use one of ${TTS_WS_MODELS.join(", ")}`);
  }
  return model;
}

export const realtimeRoute: ServiceRoute = async (app, { ctx }) => {
  const engines = acquireSpeechEngines(ctx);
  app.addHook("onClose", engines.release);
  let live = 0;

  for (const prefix of [API_PREFIX, PLAN_PREFIX]) {
    ctx.ws.route(`${prefix}${PATHS.realtimeAudio}`, {
      verify: async (wctx) => {
        modelOf(wctx);
        await engines.get(); // loads them on first use; refuses the handshake if they cannot run
      },
      handle: (ws, wctx) => {
        // A hosted service's messages reach the client tts ms late, in order (the close too); a
        // session that meets ttsCut is closed (1011) behind its first audio.
        const delayed = ctx.conditions.latency.delayTts(ws);
        const faults = ctx.conditions.faults;
        const out = faults.meets("ttsCut")
          ? cutAfterFirstAudio(delayed, () => faults.played("ttsCut", ctx.log))
          : delayed;
        void engines.get().then(({ tts }) => {
          const session = new RealtimeTtsSession(out, {
            model: modelOf(wctx),
            account: wctx.account,
            tts,
            clonedVoices: clonedVoicesOf(ctx),
            log: ctx.log,
          });
          ws.on("message", (data, isBinary) => session.onMessage(data as Buffer, isBinary));
          ws.on("close", () => {
            live--;
            session.onClose();
          });
          ws.on("error", () => session.onClose());
          live++;
          session.start();
          if (live > MAX_SESSIONS) {
            out.send(
              JSON.stringify({
                type: "tts.response.error",
                data: {
                  session_id: session.sessionId,
                  code: "503",
                  message: `overloaded: this service holds ${MAX_SESSIONS} sessions at most, try again later`,
                  details: { error: "too many sessions" },
                },
                event_id: `evt_overload_${session.sessionId}`,
              }),
            );
            out.close(1013, "overloaded");
          }
        });
      },
    });
  }
};
