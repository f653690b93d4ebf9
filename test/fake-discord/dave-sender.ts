// The voice server's part in DAVE: it is the MLS group's external sender. It announces its
// signature key (op 25) and proposes adding and removing members (op 27); the bot commits the
// proposals and the welcome goes to whoever joins. Built on ts-mls, P-256 as DAVE's ciphersuite 2.
import {
  type CiphersuiteImpl,
  decodeMlsMessage,
  encodeExternalSender,
  encodeMlsMessage,
  type GroupInfo,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  type Proposal,
  proposeExternal,
} from "ts-mls";
import { decodeKeyPackage } from "ts-mls/keyPackage.js";

const SUITE = "MLS_128_DHKEMP256_AES128GCM_SHA256_P256";

/** MLS's variable-length integer prefix (RFC 9420 §2.1.2). */
export function mlsVarint(n: number): Uint8Array {
  if (n < 0x40) return Uint8Array.of(n);
  if (n < 0x4000) return Uint8Array.of(0x40 | (n >> 8), n & 0xff);
  return Uint8Array.of(0x80 | (n >>> 24), (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
}

/** A Discord snowflake as the 8 big-endian bytes DAVE uses for group ids and identities. */
export function snowflakeBytes(id: string): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(id));
  return out;
}

export class DaveExternalSender {
  readonly #cs: CiphersuiteImpl;
  readonly #publicKey: Uint8Array;
  readonly #signKey: Uint8Array;
  /** The serialized ExternalSender (op 25's payload). */
  readonly packageBytes: Uint8Array;

  private constructor(cs: CiphersuiteImpl, keys: { publicKey: Uint8Array; signKey: Uint8Array }) {
    this.#cs = cs;
    this.#publicKey = keys.publicKey;
    this.#signKey = keys.signKey;
    this.packageBytes = encodeExternalSender({
      signaturePublicKey: keys.publicKey,
      credential: { credentialType: "basic", identity: new Uint8Array(0) },
    });
  }

  static async create(): Promise<DaveExternalSender> {
    const cs = await getCiphersuiteImpl(getCiphersuiteFromName(SUITE));
    return new DaveExternalSender(cs, await cs.signature.keygen());
  }

  /** A proposal message (for op 27) adding the member whose key package this is. */
  async proposeAdd(channelId: string, epoch: bigint, keyPackage: Uint8Array): Promise<Uint8Array> {
    const decoded = decodeKeyPackage(keyPackage, 0);
    if (!decoded) throw new Error("fake Discord: not a key package");
    return this.#proposals(channelId, epoch, { proposalType: "add", add: { keyPackage: decoded[0] } });
  }

  /** A proposal message (for op 27) removing the member at `leafIndex`. */
  async proposeRemove(channelId: string, epoch: bigint, leafIndex: number): Promise<Uint8Array> {
    return this.#proposals(channelId, epoch, { proposalType: "remove", remove: { removed: leafIndex } });
  }

  async #proposals(channelId: string, epoch: bigint, proposal: Proposal): Promise<Uint8Array> {
    const groupInfo = {
      groupContext: {
        version: "mls10",
        cipherSuite: SUITE,
        groupId: snowflakeBytes(channelId),
        epoch,
        treeHash: new Uint8Array(0),
        confirmedTranscriptHash: new Uint8Array(0),
        extensions: [{ extensionType: "external_senders", extensionData: this.packageBytes }],
      },
    } as unknown as GroupInfo;
    return encodeMlsMessage(
      await proposeExternal(groupInfo, proposal, this.#publicKey, this.#signKey, this.#cs),
    );
  }
}

/** Op 27's payload: operation `append`, then the proposal messages as one MLS vector. */
export function proposalsPayload(messages: readonly Uint8Array[]): Uint8Array {
  const body = Buffer.concat(messages);
  return Buffer.concat([Buffer.of(0), mlsVarint(body.length), body]);
}

/** Op 28's payload split into the commit (an MLSMessage) and the welcome that follows it, if any. */
export function splitCommitWelcome(payload: Uint8Array): {
  commit: Uint8Array;
  welcome: Uint8Array | undefined;
} {
  const decoded = decodeMlsMessage(payload, 0);
  if (!decoded) throw new Error("fake Discord: op 28 does not start with an MLS message");
  const end = decoded[1];
  return {
    commit: payload.subarray(0, end),
    welcome: end < payload.length ? payload.subarray(end) : undefined,
  };
}
