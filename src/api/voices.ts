// E10 cloned voices: one page, or every voice with the cursor followed automatically.
import { type ClientContext, v1 } from "./context.ts";
import { SvcValidationError } from "./errors.ts";
import type { CallOptions } from "./http.ts";
import { PATHS } from "./types/paths.ts";
import type { VoiceCreateRequest, VoiceEntry, VoiceList, VoiceListParams } from "./types/voices.ts";
import { validateVoiceListParams } from "./validate.ts";

export class VoicesApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  /** Clones a voice from a stored audio file (mp3 or wav, 5 to 10 s); see VoiceCreateRequest. */
  async create(req: VoiceCreateRequest, opts: CallOptions = {}): Promise<VoiceEntry> {
    if (typeof req.file_id !== "string" || req.file_id === "")
      throw new SvcValidationError("file_id", "the id of a stored audio file", req.file_id);
    const ex = await this.ctx.http.send({ method: "POST", path: v1(PATHS.voices), json: req }, opts);
    return ex.json<VoiceEntry>();
  }

  /** One page. */
  async list(params: VoiceListParams = {}, opts: CallOptions = {}): Promise<VoiceList> {
    validateVoiceListParams(params);
    const query = { limit: params.limit, order: params.order, before: params.before, after: params.after };
    const ex = await this.ctx.http.send({ method: "GET", path: v1(PATHS.voices), query }, opts);
    return ex.json<VoiceList>();
  }

  /**
   * Every voice, page after page. Paging goes forward with `after` = the page's last_id, or, when
   * started with `before`, backward with `before` = the page's first_id.
   */
  async *iterate(params: VoiceListParams = {}, opts: CallOptions = {}): AsyncGenerator<VoiceEntry> {
    const backward = params.before !== undefined && params.after === undefined;
    let p: VoiceListParams = { ...params };
    const seen = new Set<string>();
    for (;;) {
      const page = await this.list(p, opts);
      for (const v of page.data) yield v;
      if (!page.has_more || page.data.length === 0) return;
      const cursor = backward ? page.first_id : page.last_id;
      // A server that repeats a cursor would loop forever: stop instead.
      if (!cursor || seen.has(cursor)) return;
      seen.add(cursor);
      // With both cursors, `before` stays: it bounds the window that `after` walks through.
      p = backward ? { ...params, before: cursor } : { ...params, after: cursor };
    }
  }
}
