// The chat-engine interface: every engine (scripted, openai-compatible, a real model later)
// turns a canonical request into batches of canonical generation events.
import type { GenBatch } from "../../generation/events.ts";
import type { GenRequest } from "../../generation/request.ts";

export interface EngineCall {
  /** Aborted when the client goes away or generation is cut short (stop sequence, token budget). */
  signal: AbortSignal;
}

export interface ChatEngine {
  readonly name: string;
  /**
   * Starts a generation. A rejection (ApiError or other) happens before anything is streamed and
   * becomes an HTTP error; failures while iterating become the format's in-band error. Batches
   * hold block_start / delta / block_stop / finish events (no usage, no token counts): the
   * pipeline adds those.
   */
  open(req: GenRequest, call: EngineCall): Promise<AsyncIterable<GenBatch>>;
}
