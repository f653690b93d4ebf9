// SDES keys for SRTP in SDP (RFC 4568): reading the offer's a=crypto lines (the suites libsrtp
// runs for us: AES_CM_128_HMAC_SHA1_80 and _32, an inline key of 16 + 14 bytes, no MKI) and
// writing ours. Each side encrypts with its own key: the offer's key decrypts what the caller
// sends; ours, in the answer, encrypts what we send.
import { randomBytes } from "node:crypto";
import type { SrtpKeys, SrtpSuite } from "./media-port.ts";

export type SrtpPolicy = "off" | "optional" | "required";

const SUITES: Readonly<Record<string, { suite: SrtpSuite; tagBits: 80 | 32 }>> = {
  AES_CM_128_HMAC_SHA1_80: { suite: "AES_CM_128_HMAC_SHA1_80", tagBits: 80 },
  AES_CM_128_HMAC_SHA1_32: { suite: "AES_CM_128_HMAC_SHA1_32", tagBits: 32 },
};

/** Master key (16) + salt (14). */
const KEY_BYTES = 30;

export interface OfferedCrypto {
  readonly id: number | string;
  readonly suite: string;
  readonly config: string;
}

/** The first offered crypto line we can run, as SRTP keys with a fresh key of ours; else undefined. */
export function chooseCrypto(lines: readonly OfferedCrypto[], ourKey?: Uint8Array): SrtpKeys | undefined {
  for (const line of lines) {
    const known = SUITES[line.suite.toUpperCase()];
    if (!known) continue;
    // inline:<base64 key||salt>[|lifetime][|MKI:length]; one key, no MKI (a key per packet index
    // range is not what phones send for calls).
    const params = line.config.split(";");
    if (params.length !== 1) continue;
    const m = /^inline:([A-Za-z0-9+/=]+)(\|[^|]*)?(\|[^|]*)?$/.exec(params[0]!.trim());
    if (!m || m[3] !== undefined || (m[2] !== undefined && /:/.test(m[2]))) continue;
    const remoteKey = Buffer.from(m[1]!, "base64");
    if (remoteKey.length !== KEY_BYTES) continue;
    return {
      suite: known.suite,
      tagBits: known.tagBits,
      tag: Number(line.id) || 1,
      remoteKey,
      localKey: ourKey && ourKey.length === KEY_BYTES ? ourKey : randomBytes(KEY_BYTES),
    };
  }
  return undefined;
}

/** Our a=crypto line for an answer (the offer's tag and suite, our key). */
export function cryptoLine(keys: SrtpKeys): string {
  return `a=crypto:${keys.tag} ${keys.suite} inline:${Buffer.from(keys.localKey).toString("base64")}`;
}
