// Response ids: a prefix (`chatcmpl-`, `msg_`, `resp_`, `rs_`, `fc_`…) and 24 random alphanumerics.
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let id = prefix;
  // 62 symbols from 256 values: a slight bias, irrelevant for ids that only need to be unique.
  for (const b of bytes) id += ALPHABET[b % ALPHABET.length];
  return id;
}
