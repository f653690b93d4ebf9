// A stand-in for Twilio's REST API and its callbacks, to the letter of the published shapes:
// form-encoded POST /2010-04-01/Accounts/{AccountSid}/Calls.json with Basic auth, a 201 call
// resource, status callbacks (initiated, ringing, answered, completed with busy / no-answer /
// canceled / completed) and the asyncAmd callback (AnsweredBy, MachineDetectionDuration), each
// signed with X-Twilio-Signature. An answered call runs its TwiML's <Connect><Stream> through the
// project's simulated media stream (tools/twilio-sim), playing what the callee "says". New TwiML for
// a live call (POST .../Calls/{CallSid}.json) ends its stream: <Hangup/> ends the call, a
// <Dial><Conference> seats it in that conference (tools/twilio-sim/conference.ts), where it stays up.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import twilio from "twilio";
import { ConferenceHub } from "../../tools/twilio-sim/conference.ts";
import { type SimResult, simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { type CallInstruction, readCallTwiml } from "../../tools/twilio-sim/twiml-read.ts";

export interface Callee {
  /** busy / no-answer never answer; answered ones play `audio` (8 kHz) into the stream. */
  readonly behaviour: "answer" | "busy" | "no-answer";
  /** How long a busy line takes to say so, ms (default 100; a real one rings a moment first). */
  readonly busyAfterMs?: number;
  readonly audio?: Int16Array;
  /** AnsweredBy sent this long after the answer (asyncAmd), when detection was asked. */
  readonly amd?: { readonly answeredBy: string; readonly afterMs: number };
  readonly hangUpAfterS?: number;
  /**
   * Keys pressed once the bridge has spoken to the callee and then been quiet a moment (a person
   * taking a warm transfer after its brief); the callee's own `audio` is then no reply to wait on.
   */
  readonly keysAfterBridge?: string;
}

export interface CreatedCall {
  readonly sid: string;
  readonly form: URLSearchParams;
  sim?: Promise<SimResult>;
  readonly callbacks: { url: string; params: Record<string, string>; status: number }[];
}

/** New TwiML a live call was given, in the order asked. */
export interface CallUpdate extends CallInstruction {
  readonly sid: string;
  readonly twiml: string;
}

export class FakeTwilio {
  readonly calls: CreatedCall[] = [];
  readonly updates: CallUpdate[] = [];
  /** The account's conferences (<Dial><Conference>). */
  readonly conferences = new ConferenceHub();
  url = "";
  readonly #server: Server;
  readonly #accountSid: string;
  readonly #authToken: string;
  readonly #callees: Readonly<Record<string, Callee>>;
  readonly #live = new Map<string, { cancel: () => void; hangUp?: AbortController }>();

  constructor(accountSid: string, authToken: string, callees: Readonly<Record<string, Callee>>) {
    this.#accountSid = accountSid;
    this.#authToken = authToken;
    this.#callees = callees;
    this.#server = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => {
        body += d.toString();
      });
      req.on("end", () => {
        const basic = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`;
        if (req.headers.authorization !== basic) {
          res.writeHead(401, { "content-type": "application/json" });
          res.end(JSON.stringify({ code: 20003, message: "Authenticate", status: 401 }));
          return;
        }
        const form = new URLSearchParams(body);
        const base = `/2010-04-01/Accounts/${accountSid}/Calls`;
        if (req.method === "POST" && req.url === `${base}.json`) return this.#create(form, res);
        const m = new RegExp(`^${base}/(CA[0-9a-f]{32})\\.json$`).exec(req.url ?? "");
        if (req.method === "POST" && m && form.get("Status") === "canceled") {
          this.#live.get(m[1]!)?.cancel();
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(this.#resource(m[1]!, form, "canceled")));
          return;
        }
        if (req.method === "POST" && m) {
          const status = this.#update(m[1]!, form.get("Twiml") ?? "");
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(this.#resource(m[1]!, form, status)));
          return;
        }
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: 20404, message: "Not Found", status: 404 }));
      });
    });
  }

  /**
   * A call placed elsewhere (a simulated caller's) that this REST API may give new TwiML: the
   * signal to pass as its `ended`.
   */
  follow(callSid: string): AbortSignal {
    const hangUp = new AbortController();
    this.#live.set(callSid, { cancel: () => {}, hangUp });
    return hangUp.signal;
  }

  /** The far end of a live call hangs up: it leaves its conference (ending it on exit), else its stream stops. */
  hangUp(callSid: string): void {
    const seat = this.conferences.seat(callSid);
    if (seat) seat.hangUp();
    else this.#live.get(callSid)?.hangUp?.abort();
  }

  /** New TwiML for a live call: <Hangup/> ends it (and its stream), a conference seats it there. */
  #update(sid: string, twiml: string): string {
    const instruction = readCallTwiml(twiml);
    this.updates.push({ sid, twiml, ...instruction });
    const live = this.#live.get(sid);
    if (instruction.conference && live?.hangUp) {
      live.hangUp.abort(this.conferences.join(sid, instruction.conference));
      return "in-progress";
    }
    if (instruction.hangUp) this.hangUp(sid);
    return "completed";
  }

  async start(): Promise<void> {
    await new Promise<void>((r) => this.#server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.#server.address() as { port: number }).port}`;
  }

  close(): Promise<void> {
    return new Promise((r) => this.#server.close(() => r()));
  }

  #resource(sid: string, form: URLSearchParams, status: string) {
    return {
      sid,
      account_sid: this.#accountSid,
      to: form.get("To"),
      from: form.get("From"),
      status,
      direction: "outbound-api",
      api_version: "2010-04-01",
      uri: `/2010-04-01/Accounts/${this.#accountSid}/Calls/${sid}.json`,
    };
  }

  #create(form: URLSearchParams, res: import("node:http").ServerResponse): void {
    const to = form.get("To") ?? "";
    const callee = this.#callees[to];
    if (!form.get("From") || !to || (!form.get("Twiml") && !form.get("Url"))) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: 21201, message: "No 'To' number is specified", status: 400 }));
      return;
    }
    const sid = `CA${randomBytes(16).toString("hex")}`;
    const call: CreatedCall = { sid, form, callbacks: [] };
    this.calls.push(call);
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify(this.#resource(sid, form, "queued")));
    void this.#run(call, callee);
  }

  async #callback(call: CreatedCall, url: string | null, extra: Record<string, string>): Promise<void> {
    if (!url) return;
    const params: Record<string, string> = {
      AccountSid: this.#accountSid,
      ApiVersion: "2010-04-01",
      CallSid: call.sid,
      From: call.form.get("From") ?? "",
      To: call.form.get("To") ?? "",
      Direction: "outbound-api",
      ...extra,
    };
    const signature = twilio.getExpectedTwilioSignature(this.#authToken, url, params);
    // A bridge that has gone (the test is over) gets no more callbacks, as with Twilio's retries spent.
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
      body: new URLSearchParams(params).toString(),
    }).catch(() => undefined);
    call.callbacks.push({ url, params, status: r?.status ?? 0 });
  }

  async #run(call: CreatedCall, callee: Callee | undefined): Promise<void> {
    const status = call.form.get("StatusCallback");
    const events = call.form.getAll("StatusCallbackEvent");
    const say = (s: string, extra: Record<string, string> = {}) =>
      events.includes(s === "in-progress" ? "answered" : s === "queued" ? "initiated" : s) ||
      !["queued", "ringing", "in-progress"].includes(s)
        ? this.#callback(call, status, { CallStatus: s, ...extra })
        : Promise.resolve();
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await say("queued");
    if (!callee || callee.behaviour === "busy") {
      await wait(callee?.busyAfterMs ?? 100);
      await say(callee ? "busy" : "failed", callee ? { SipResponseCode: "486" } : { SipResponseCode: "404" });
      return;
    }
    let canceled = false;
    this.#live.set(call.sid, { cancel: () => (canceled = true) });
    await wait(100);
    await say("ringing");
    if (callee.behaviour === "no-answer") {
      const until = Date.now() + Number(call.form.get("Timeout") ?? 60) * 1000;
      while (!canceled && Date.now() < until) await wait(50);
      await say(canceled ? "canceled" : "no-answer");
      return;
    }
    await wait(300);
    if (canceled) {
      await say("canceled");
      return;
    }
    await say("in-progress");
    const amdUrl = call.form.get("AsyncAmdStatusCallback");
    if (callee.amd && call.form.get("MachineDetection") && call.form.get("AsyncAmd") === "true") {
      const { answeredBy, afterMs } = callee.amd;
      setTimeout(
        () =>
          void this.#callback(call, amdUrl, {
            AnsweredBy: answeredBy,
            MachineDetectionDuration: String(afterMs),
          }),
        afterMs,
      );
    }
    const hangUp = new AbortController();
    this.#live.set(call.sid, { cancel: () => {}, hangUp });
    call.sim = simulateCall({
      ended: hangUp.signal,
      noReplyMs: 60_000,
      url: "http://unused",
      twiml: call.form.get("Twiml")!,
      authToken: this.#authToken,
      callSid: call.sid,
      accountSid: this.#accountSid,
      from: call.form.get("From") ?? "",
      to: call.form.get("To") ?? "",
      ...(callee.audio ? { caller: { samples: callee.audio, rate: 8000 } } : {}),
      ...(callee.keysAfterBridge ? { says: [{ keys: callee.keysAfterBridge }], speechThresholdDbfs: 0 } : {}),
      maxSeconds: callee.hangUpAfterS ?? 15,
      hangUpAfterMs: 60_000,
      fetchTranscript: false,
    });
    await call.sim.catch(() => undefined);
    await say("completed", { CallDuration: "10" });
  }
}
