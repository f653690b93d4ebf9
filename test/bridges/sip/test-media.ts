// TEST DOUBLE for the SIP media side (bridges/sip/rtp is built on another branch): a port pool of
// real UDP sockets on ephemeral ports, and a transport that counts the RTP it receives and records
// what signalling told it. Just enough of media-port.ts for the signalling tests to run end to end.
import { createSocket, type Socket } from "node:dgram";
import type {
  NegotiatedMedia,
  RtpEndpoint,
  RtpPortPool,
  SipCallControl,
  SipCallTransport,
  SipCallTransportOptions,
} from "../../../bridges/sip/media-port.ts";
import type { AgentAudio, CallInfo, OutputFormat, TransportListener } from "../../../bridges/transport.ts";

export class TestRtpEndpoint implements RtpEndpoint {
  readonly socket: Socket;
  readonly port: number;
  packets = 0;
  closed = false;
  readonly #pool: TestRtpPortPool;

  constructor(pool: TestRtpPortPool, socket: Socket) {
    this.#pool = pool;
    this.socket = socket;
    this.port = socket.address().port;
    socket.on("message", () => this.packets++);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close();
    this.#pool.released(this);
  }
}

export class TestRtpPortPool implements RtpPortPool {
  readonly open_: Set<TestRtpEndpoint> = new Set();
  opened = 0;
  /** When set, open() waits for it (to hold an INVITE unanswered, e.g. for CANCEL). */
  gate?: Promise<void>;
  /** When set, open() rejects (every port taken). */
  exhausted = false;

  get inUse(): number {
    return this.open_.size;
  }

  async open(): Promise<RtpEndpoint> {
    if (this.gate) await this.gate;
    if (this.exhausted) throw new Error("every RTP port is taken");
    const socket = createSocket("udp4");
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    const ep = new TestRtpEndpoint(this, socket);
    this.open_.add(ep);
    this.opened++;
    return ep;
  }

  released(ep: TestRtpEndpoint): void {
    this.open_.delete(ep);
  }
}

export class TestSipTransport implements SipCallTransport {
  readonly info: CallInfo;
  readonly inputRate = 8000;
  readonly output: OutputFormat = { kind: "pcm", rate: 8000 };
  readonly control: SipCallControl;
  readonly endpoint: TestRtpEndpoint;
  readonly medias: NegotiatedMedia[] = [];
  endReasons: string[] = [];
  /** Digits signalling passed on from SIP INFO. */
  readonly infoDigits: string[] = [];
  readonly #ended: Promise<string>;
  #resolveEnded!: (reason: string) => void;

  constructor(opts: SipCallTransportOptions) {
    this.info = opts.info;
    this.control = opts.control;
    this.endpoint = opts.endpoint as TestRtpEndpoint;
    this.medias.push(opts.media);
    this.#ended = new Promise((r) => {
      this.#resolveEnded = r;
    });
  }

  /** Resolves with the reason signalling gave when it ended the call. */
  ended(): Promise<string> {
    return this.#ended;
  }

  attach(_listener: TransportListener): void {}
  play(_audio: AgentAudio): void {}
  clear(): void {}
  queuedMs(): number {
    return 0;
  }
  playedMs(): number {
    return 0;
  }
  async hangUp(reason: string): Promise<void> {
    await this.control.hangUp(reason);
    this.endpoint.close();
  }
  transfer(target: string): Promise<void> {
    return this.control.transfer(target);
  }
  updateMedia(media: NegotiatedMedia): void {
    this.medias.push(media);
  }
  digitFromInfo(digit: string): void {
    this.infoDigits.push(digit);
  }
  end(reason: string): void {
    this.endReasons.push(reason);
    this.endpoint.close();
    this.#resolveEnded(reason);
  }
}

/** The factory the server gets, keeping every transport it made. */
export function testTransportFactory(): {
  create: (o: SipCallTransportOptions) => TestSipTransport;
  made: TestSipTransport[];
} {
  const made: TestSipTransport[] = [];
  return {
    made,
    create: (o) => {
      const t = new TestSipTransport(o);
      made.push(t);
      return t;
    },
  };
}
