// E10 list query: limit (1–100, default 20), order (asc | desc, default desc), before / after
// cursors (voice ids of the caller). A bad value is a 400 naming the parameter.
import { LIMITS } from "../../api/types/limits.ts";
import { VOICE_LIST_ORDERS, type VoiceListOrder } from "../../api/types/voices.ts";
import { badParam } from "../errors.ts";
import type { VoicePageQuery } from "../store/voices.ts";

/** Reads the query; `known(id)` tells whether a cursor names one of the caller's voices. */
export function parseVoiceListQuery(query: unknown, known: (id: string) => boolean): VoicePageQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const one = (name: string): string | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== "string") throw badParam(name, "must be given once");
    return v;
  };
  const { min, max } = LIMITS.voicePageSize;
  const limitText = one("limit");
  let limit: number = LIMITS.voicePageSize.default;
  if (limitText !== undefined) {
    if (!/^\d+$/.test(limitText) || Number(limitText) < min || Number(limitText) > max) {
      throw badParam("limit", `must be an integer from ${min} to ${max} (got ${JSON.stringify(limitText)})`);
    }
    limit = Number(limitText);
  }
  const orderText = one("order") ?? "desc";
  if (!(VOICE_LIST_ORDERS as readonly string[]).includes(orderText)) {
    throw badParam(
      "order",
      `must be one of ${VOICE_LIST_ORDERS.join(", ")} (got ${JSON.stringify(orderText)})`,
    );
  }
  const cursor = (name: "before" | "after") => {
    const id = one(name);
    if (id === undefined) return undefined;
    if (!known(id)) {
      throw badParam(name, `no voice ${JSON.stringify(id)} for this account (a voice id from a list page)`);
    }
    return id;
  };
  return { limit, order: orderText as VoiceListOrder, before: cursor("before"), after: cursor("after") };
}
