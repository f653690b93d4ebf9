// Every route module of the local service, registered in this order by server.ts. To add an
// endpoint family, write a ServiceRoute (a fastify plugin receiving `{ ctx }`) and list it here.
import type { ServiceRoute } from "../context.ts";
import { asrRoute } from "./asr.ts";
import { chatCompletionsRoute } from "./chat-completions.ts";
import { filesRoute } from "./files.ts";
import { imagesRoute } from "./images.ts";
import { messagesRoute } from "./messages.ts";
import { realtimeRoute } from "./realtime.ts";
import { responsesRoute } from "./responses.ts";
import { speechRoute } from "./speech.ts";
import { voicesRoute } from "./voices.ts";

export const ROUTES: readonly ServiceRoute[] = [
  filesRoute,
  chatCompletionsRoute,
  messagesRoute,
  responsesRoute,
  speechRoute,
  realtimeRoute,
  asrRoute,
  voicesRoute,
  imagesRoute,
];
