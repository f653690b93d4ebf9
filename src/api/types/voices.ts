// E10 cloned voices.

export const VOICE_LIST_ORDERS = ["asc", "desc"] as const;
export type VoiceListOrder = (typeof VOICE_LIST_ORDERS)[number];

export interface VoiceEntry {
  /** Documented as int; a text id with a `voice-` prefix occurs. */
  id: string | number;
  /** Documented as int; a text id with a `file-` prefix occurs. */
  file_id: string | number;
  created_at: number;
}

export interface VoiceList {
  object: "list";
  data: VoiceEntry[];
  has_more: boolean;
  first_id: string;
  last_id: string;
}

/** Query parameters (sent as strings). */
export interface VoiceListParams {
  /** 1 to 100, default 20. */
  limit?: number;
  /** By creation time; default `desc` (newer first). */
  order?: VoiceListOrder;
  /** Cursor voice id. */
  before?: string;
  /** Cursor voice id. */
  after?: string;
}
