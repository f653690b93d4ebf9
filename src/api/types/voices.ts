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

/**
 * Creating a cloned voice (not shown by the spec; the local service's design, see docs/local-service.md "Images
 * and cloned voices"): `POST /v1/audio/voices` with a stored E9 audio file (mp3 or wav, 5 to 10
 * seconds of one person speaking). The answer is the new VoiceEntry; use its id as E4 `voice` or
 * E5 `voice_id`, with the `voice_label` a custom voice requires.
 */
export interface VoiceCreateRequest {
  /** Id of the stored audio file (E9 upload, purpose `storage`). */
  file_id: string;
}
