// Narrowing of values read from JSON (request bodies, wire messages, answers of other services):
// one definition of what counts as an object, so every reader refuses arrays and null alike.

/** A JSON object: its fields are still unchecked. */
export type JsonObject = Record<string, unknown>;

/** A plain object, not null and not an array. */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
