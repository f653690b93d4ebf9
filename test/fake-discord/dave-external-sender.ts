// The voice server's side of DAVE's MLS group (https://daveprotocol.com): davey implements only the member
// side, so the fake is the MLS external sender with ts-mls. It publishes its P-256 signing key and basic
// credential (opcode 25), and signs external Add/Remove proposals for a group whose id is the channel id as a
// big-endian u64, sent as opcode 27: `u8 operation (0 = append)` then the MLS vector of MLSMessages.

import { createPrivateKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
// ts-mls's entry point loads its noble crypto provider, whose peer dependencies (@noble/hashes,
// @noble/curves) are not installed; the modules the external sender needs are imported directly instead,
// and its one primitive, ECDSA P-256 signing, is node:crypto's.
import type { CiphersuiteImpl } from "../../node_modules/ts-mls/dist/src/crypto/ciphersuite.js";
import { proposeExternal } from "../../node_modules/ts-mls/dist/src/externalProposal.js";
import { encodeExternalSender } from "../../node_modules/ts-mls/dist/src/externalSender.js";
import type { GroupInfo } from "../../node_modules/ts-mls/dist/src/groupInfo.js";
import {
  decodeMlsMessage,
  encodeMlsMessage,
  type MLSMessage,
} from "../../node_modules/ts-mls/dist/src/message.js";
import type { Proposal } from "../../node_modules/ts-mls/dist/src/proposal.js";

const DAVE_CIPHERSUITE = "MLS_128_DHKEMP256_AES128GCM_SHA256_P256";
const WIRE_KEY_PACKAGE = 5;
const MLS10 = 1;

export class DaveExternalSender {
  readonly #cs: CiphersuiteImpl;
  readonly #publicKey: Uint8Array;
  readonly #signKey: Uint8Array;
  /** Opcode 25's payload: the serialized ExternalSender. */
  readonly externalSenderPackage: Uint8Array;

  private constructor(cs: CiphersuiteImpl, publicKey: Uint8Array, signKey: Uint8Array) {
    this.#cs = cs;
    this.#publicKey = publicKey;
    this.#signKey = signKey;
    this.externalSenderPackage = encodeExternalSender({
      signaturePublicKey: publicKey,
      credential: { credentialType: "basic", identity: new TextEncoder().encode("fake-discord-voice") },
    });
  }

  static async create(): Promise<DaveExternalSender> {
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    const jwk = publicKey.export({ format: "jwk" });
    const uncompressed = Buffer.concat([
      Buffer.of(4),
      Buffer.from(jwk.x ?? "", "base64url"),
      Buffer.from(jwk.y ?? "", "base64url"),
    ]);
    const der = privateKey.export({ format: "der", type: "pkcs8" });
    return new DaveExternalSender(p256Signer(), uncompressed, new Uint8Array(der));
  }

  /**
   * Opcode 27's payload adding the members whose serialized KeyPackages (as davey makes them) are
   * given: one Add proposal each, in one message (the server batches the members waiting to join).
   */
  async addProposal(channelId: string, epoch: bigint, ...keyPackages: Uint8Array[]): Promise<Uint8Array> {
    const proposals = keyPackages.map((keyPackage): Proposal => {
      const wrapped = new Uint8Array(4 + keyPackage.length);
      wrapped.set([0, MLS10, 0, WIRE_KEY_PACKAGE]);
      wrapped.set(keyPackage, 4);
      const decoded = decodeMlsMessage(wrapped, 0)?.[0];
      if (decoded?.wireformat !== "mls_key_package") throw new Error("not a serialized MLS KeyPackage");
      return { proposalType: "add", add: { keyPackage: decoded.keyPackage } };
    });
    return this.#proposals(channelId, epoch, ...proposals);
  }

  /** Opcode 27's payload removing the member at a leaf index. */
  async removeProposal(channelId: string, epoch: bigint, leafIndex: number): Promise<Uint8Array> {
    return this.#proposals(channelId, epoch, { proposalType: "remove", remove: { removed: leafIndex } });
  }

  async #proposals(channelId: string, epoch: bigint, ...proposals: Proposal[]): Promise<Uint8Array> {
    const groupInfo: GroupInfo = {
      groupContext: {
        version: "mls10",
        cipherSuite: DAVE_CIPHERSUITE,
        groupId: groupIdOf(channelId),
        epoch,
        treeHash: new Uint8Array(),
        confirmedTranscriptHash: new Uint8Array(),
        extensions: [{ extensionType: "external_senders", extensionData: this.externalSenderPackage }],
      },
      extensions: [],
      confirmationTag: new Uint8Array(),
      signer: 0,
      signature: new Uint8Array(),
    };
    const messages: Uint8Array[] = [];
    for (const proposal of proposals)
      messages.push(
        encodeMlsMessage(
          await proposeExternal(groupInfo, proposal, this.#publicKey, this.#signKey, this.#cs),
        ),
      );
    const encoded = Buffer.concat(messages);
    const prefix = mlsVarint(encoded.length);
    const out = new Uint8Array(1 + prefix.length + encoded.length);
    out[0] = 0; // append
    out.set(prefix, 1);
    out.set(encoded, 1 + prefix.length);
    return out;
  }
}

/** Splits opcode 28's payload (an MLSMessage commit, then optionally an MLSMessage welcome). */
export function splitCommitWelcome(payload: Uint8Array): { commit: Uint8Array; welcome?: Uint8Array } {
  const first = decodeMlsMessage(payload, 0);
  if (!first) throw new Error("opcode 28 does not start with an MLS message");
  const [message, length] = first as [MLSMessage, number];
  if (message.wireformat !== "mls_public_message")
    throw new Error(`opcode 28 starts with ${message.wireformat}`);
  const commit = payload.subarray(0, length);
  if (length === payload.length) return { commit };
  return { commit, welcome: payload.subarray(length) };
}

/**
 * The slice of a ts-mls ciphersuite that external proposals use: signatures (ECDSA P-256 with SHA-256,
 * DER-encoded as MLS specifies). Sign keys are PKCS#8 DER.
 */
function p256Signer(): CiphersuiteImpl {
  const keyOf = (der: Uint8Array): KeyObject =>
    createPrivateKey({ key: Buffer.from(der), format: "der", type: "pkcs8" });
  const signature = {
    sign: async (signKey: Uint8Array, message: Uint8Array) =>
      new Uint8Array(sign("sha256", message, { key: keyOf(signKey), dsaEncoding: "der" })),
    verify: async () => {
      throw new Error("the external sender never verifies");
    },
    keygen: async () => {
      throw new Error("keys are made by DaveExternalSender.create");
    },
  };
  return { signature } as unknown as CiphersuiteImpl;
}

function groupIdOf(channelId: string): Uint8Array {
  const id = new Uint8Array(8);
  new DataView(id.buffer).setBigUint64(0, BigInt(channelId));
  return id;
}

/** MLS variable-length integer (RFC 9420 §2.1.2). */
function mlsVarint(n: number): Uint8Array {
  if (n < 0x40) return Uint8Array.of(n);
  if (n < 0x4000) return Uint8Array.of(0x40 | (n >> 8), n & 0xff);
  return Uint8Array.of(0x80 | (n >>> 24), (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
}
