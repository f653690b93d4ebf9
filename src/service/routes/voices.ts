// E10 GET /v1/audio/voices (the caller's cloned voices, paged by cursors) and the creation of a
// cloned voice, POST /v1/audio/voices (voices-create.ts). The store is attached to the speech
// routes, so E4 `voice` and E5 `voice_id` accept the ids it hands out.
import type { VoiceList } from "../../api/types/voices.ts";
import type { ServiceRoute } from "../context.ts";
import { attachClonedVoices } from "../speech/engines.ts";
import { VoiceStore } from "../store/voices.ts";
import { createVoice, toVoiceEntry } from "./voices-create.ts";
import { parseVoiceListQuery } from "./voices-query.ts";

const PATH = "/v1/audio/voices";

export const voicesRoute: ServiceRoute = async (app, { ctx }) => {
  const store = new VoiceStore(ctx.db);
  attachClonedVoices(ctx, (account, id) => store.get(account, id)?.voice);

  app.post(PATH, async (request) =>
    toVoiceEntry(await createVoice(ctx, store, request.account, request.body)),
  );

  app.get(PATH, async (request): Promise<VoiceList> => {
    const account = request.account;
    const q = parseVoiceListQuery(request.query, (id) => store.get(account, id) !== undefined);
    const page = store.page(account, q);
    const data = page.voices.map(toVoiceEntry);
    return {
      object: "list",
      data,
      has_more: page.hasMore,
      first_id: data[0] ? String(data[0].id) : "",
      last_id: data.length > 0 ? String(data[data.length - 1]!.id) : "",
    };
  });
};
