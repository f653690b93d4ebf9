// The content filter of the image endpoints: a configurable list of words and phrases; a prompt
// containing one (whole words, any case) is not rendered and its result says
// finish_reason `content_filtered`.

/** Used when the service is given no list of its own. */
export const DEFAULT_IMAGE_BLOCKLIST: readonly string[] = [
  "gore",
  "nude",
  "nudity",
  "naked",
  "beheading",
  "child abuse",
];

const normalize = (s: string) =>
  ` ${s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join(" ")} `;

export class ContentFilter {
  private readonly terms: string[];

  constructor(blocklist: readonly string[] = DEFAULT_IMAGE_BLOCKLIST) {
    this.terms = blocklist.map(normalize).filter((t) => t.trim() !== "");
  }

  /** The first blocked term in the text, or undefined. */
  match(text: string): string | undefined {
    const t = normalize(text);
    return this.terms.find((term) => t.includes(term))?.trim();
  }
}
