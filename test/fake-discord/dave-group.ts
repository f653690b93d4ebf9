// One call's DAVE group as the voice server runs it (https://daveprotocol.com): after the bot's key package
// (26) the server names itself external sender (25); each member then joins through an external Add (27),
// the bot commits (28: commit‖welcome), the server announces the commit with a transition id (29), hands
// the welcome to the newcomer and the commit to the other members, and on the bot's transition ready (23)
// executes the transition (22). A member leaving is an external Remove the same way. Changes run one at a
// time, each in a new epoch.

import { type DaveExternalSender, splitCommitWelcome } from "./dave-external-sender.ts";
import type { SimulatedMember } from "./member.ts";

/** How the group reaches the bot's voice WebSocket. */
export interface DaveBotLink {
  channelId: string;
  sendBinary(op: number, payload: Uint8Array): void;
  sendJson(packet: { op: number; d: unknown }): void;
  /** Something changed that tests may be waiting on. */
  changed(): void;
  /** A step failed (recorded; the queue moves on). */
  failed(error: unknown): void;
}

export class DaveGroup {
  readonly #external: DaveExternalSender;
  readonly #bot: DaveBotLink;
  readonly #members: () => readonly SimulatedMember[];
  readonly #delayMs: number;
  #started = false;
  #epoch = 0n;
  #transition = 0;
  #queue: Promise<void> = Promise.resolve();
  #pendingCommit: ((payload: Buffer) => void) | undefined;
  readonly #pendingReady = new Map<number, () => void>();

  /**
   * `delayMs`: how long a member takes to answer (its key package reaching the server after the
   * bot's, or after it joins): real clients take hundreds of milliseconds.
   */
  constructor(
    external: DaveExternalSender,
    bot: DaveBotLink,
    members: () => readonly SimulatedMember[],
    delayMs = 0,
  ) {
    this.#delayMs = delayMs;
    this.#external = external;
    this.#bot = bot;
    this.#members = members;
  }

  /** Whether the group exists (the bot's key package came; no downgrade since). */
  get started(): boolean {
    return this.#started;
  }

  /** Resolves when every change queued so far has been committed and executed. */
  settled(): Promise<void> {
    return this.#queue;
  }

  /** Opcode 26: a (new) key package, so the bot starts a fresh group that every member joins again. */
  keyPackage(): void {
    this.#started = true;
    this.#epoch = 0n;
    this.#bot.sendBinary(25, this.#external.externalSenderPackage);
    const members = this.#members();
    for (const member of members) member.stopDave();
    // The members waiting join in one commit, as the server batches the key packages it holds.
    if (members.length > 0) this.#enqueue(() => this.#add(members));
  }

  /** Opcode 28 from the bot. */
  commitWelcome(payload: Buffer): void {
    const resolve = this.#pendingCommit;
    this.#pendingCommit = undefined;
    resolve?.(payload);
  }

  /** Opcode 23 from the bot. */
  transitionReady(transitionId: number): void {
    this.#pendingReady.get(transitionId)?.();
  }

  /**
   * A downgrade to transport-only (protocol version 0): 21 prepare transition → the bot's 23 → 22
   * execute; `executed` runs as 22 goes out (members stop DAVE then). The group is dropped: a later
   * upgrade (24 prepare epoch 1) builds a new one from the bot's key package.
   */
  downgrade(executed: () => void): Promise<void> {
    this.#enqueue(async () => {
      const transitionId = ++this.#transition;
      const ready = new Promise<void>((resolve) => this.#pendingReady.set(transitionId, resolve));
      this.#bot.sendJson({ op: 21, d: { transition_id: transitionId, protocol_version: 0 } });
      await ready;
      this.#pendingReady.delete(transitionId);
      this.#started = false;
      executed();
      for (const m of this.#members()) m.stopDave();
      this.#bot.sendJson({ op: 22, d: { transition_id: transitionId } });
      this.#bot.changed();
    });
    return this.#queue;
  }

  /** An upgrade back to DAVE: 24 prepare epoch 1; the bot's new key package (26) then rebuilds the group. */
  upgrade(): void {
    this.#enqueue(async () => {
      this.#bot.sendJson({ op: 24, d: { protocol_version: 1, epoch: 1 } });
    });
  }

  memberJoined(member: SimulatedMember): void {
    if (this.#started) this.#enqueue(() => this.#add([member]));
  }

  /** Call after the member is gone from `members()`. */
  memberLeft(member: SimulatedMember): void {
    if (member.dave?.ready) this.#enqueue(() => this.#remove(member));
    else member.stopDave();
  }

  #enqueue(step: () => Promise<void>): void {
    this.#queue = this.#queue.then(step).catch((error: unknown) => this.#bot.failed(error));
  }

  async #add(joining: readonly SimulatedMember[]): Promise<void> {
    if (this.#delayMs > 0) await new Promise((r) => setTimeout(r, this.#delayMs));
    const members = joining.filter((m) => this.#members().includes(m));
    if (members.length === 0) return;
    const keyPackages = members.map((m) =>
      m.startDave(this.#bot.channelId, this.#external.externalSenderPackage),
    );
    const proposals = await this.#external.addProposal(this.#bot.channelId, this.#epoch, ...keyPackages);
    await this.#commitRound(proposals, members, (welcome) => {
      if (!welcome)
        throw new Error(`the bot's commit adding ${members.map((m) => m.userId)} came without a welcome`);
      for (const m of members) m.daveWelcome(welcome);
    });
  }

  async #remove(member: SimulatedMember): Promise<void> {
    const leaf = member.dave?.ownLeafIndex;
    member.stopDave();
    if (leaf === null || leaf === undefined) return;
    const proposals = await this.#external.removeProposal(this.#bot.channelId, this.#epoch, leaf);
    await this.#commitRound(proposals, [], () => {});
  }

  /** 27 → the bot's 28 → the welcome to the newcomer, the commit to the others and (29) the bot → 23 → 22. */
  async #commitRound(
    proposals: Uint8Array,
    joining: readonly SimulatedMember[],
    welcome: (welcome: Uint8Array | undefined) => void,
  ): Promise<void> {
    const members = this.#members();
    const others = members.filter((m) => !joining.includes(m) && m.dave?.ready);
    const userIds = members.map((m) => m.userId);
    // Commits refer to the proposals they apply, so the members must have seen them too.
    for (const m of others) m.daveProposals(proposals, userIds);
    const committed = new Promise<Buffer>((resolve) => {
      this.#pendingCommit = resolve;
    });
    this.#bot.sendBinary(27, proposals);
    const parts = splitCommitWelcome(await committed);
    welcome(parts.welcome);
    for (const m of others) m.daveCommit(parts.commit);
    this.#epoch++;
    const transitionId = ++this.#transition;
    const ready = new Promise<void>((resolve) => this.#pendingReady.set(transitionId, resolve));
    const announce = new Uint8Array(2 + parts.commit.length);
    new DataView(announce.buffer).setUint16(0, transitionId);
    announce.set(parts.commit, 2);
    this.#bot.sendBinary(29, announce);
    await ready;
    this.#pendingReady.delete(transitionId);
    this.#bot.sendJson({ op: 22, d: { transition_id: transitionId } });
    this.#bot.changed();
  }
}
