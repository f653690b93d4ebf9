// A transport that hands everything to another: the base of the decorators that watch a call on
// its way through (the recording, the console), each overriding only what it watches.
import type {
  AgentAudio,
  CallInfo,
  CallTransport,
  DtmfOut,
  OutputFormat,
  TransportListener,
} from "./transport.ts";

export class PassThroughTransport implements CallTransport {
  readonly info: CallInfo;
  readonly inputRate: number;
  readonly output: OutputFormat;
  readonly dtmfOut: DtmfOut | undefined;
  protected readonly inner: CallTransport;

  constructor(inner: CallTransport) {
    this.inner = inner;
    this.info = inner.info;
    this.inputRate = inner.inputRate;
    this.output = inner.output;
    // Tones go through play() (watched and recorded like the voice); a signal goes to the transport.
    this.dtmfOut = inner.dtmfOut;
  }

  attach(listener: TransportListener): void {
    this.inner.attach(listener);
  }

  play(audio: AgentAudio): void {
    this.inner.play(audio);
  }

  clear(): void {
    this.inner.clear();
  }

  queuedMs(): number {
    return this.inner.queuedMs();
  }

  playedMs(): number {
    return this.inner.playedMs();
  }

  hangUp(reason: string): Promise<void> {
    return this.inner.hangUp(reason);
  }

  transfer(target: string): Promise<void> {
    return this.inner.transfer(target);
  }
}
