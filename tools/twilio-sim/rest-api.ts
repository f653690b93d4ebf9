// Twilio's REST API as far as a live call needs it, for the calls the simulator places: new TwiML
// for a call (`calls(sid).update({twiml})`: POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json,
// form-encoded, Basic auth with the account's SID and auth token). As on Twilio, new TwiML ends the
// call's <Connect><Stream>: the simulated call hears it through the `ended` signal it was given, and
// the update is kept (a <Dial> is a transfer, <Hangup/> a hang-up) for the caller to read; a
// <Dial><Conference> seats the call in that conference (conference.ts), where it stays up. A bridge
// reaches it by its REST base URL (TWILIO_API_BASE).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { ConferenceHub } from "./conference.ts";
import { type CallInstruction, readCallTwiml } from "./twiml-read.ts";

export interface TwimlUpdate extends CallInstruction {
  twiml: string;
}

interface FollowedCall {
  readonly ended: AbortController;
  readonly updates: TwimlUpdate[];
}

export class SimulatedRestApi {
  readonly #server: Server;
  readonly #accountSid: string;
  readonly #basic: string;
  readonly #calls = new Map<string, FollowedCall>();
  /** The account's conferences, where <Dial><Conference> puts a followed call. */
  readonly conferences: ConferenceHub;
  #url = "";

  private constructor(accountSid: string, authToken: string, conferences: ConferenceHub) {
    this.conferences = conferences;
    this.#accountSid = accountSid;
    this.#basic = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`;
    this.#server = createServer((req, res) => this.#serve(req, res));
  }

  /** Listens on a free loopback port; requests must carry this account's credentials. */
  static async start(
    accountSid: string,
    authToken: string,
    conferences = new ConferenceHub(),
  ): Promise<SimulatedRestApi> {
    const api = new SimulatedRestApi(accountSid, authToken, conferences);
    await new Promise<void>((resolve) => api.#server.listen(0, "127.0.0.1", resolve));
    api.#url = `http://127.0.0.1:${(api.#server.address() as { port: number }).port}`;
    return api;
  }

  /** The REST API's base URL (in place of https://api.twilio.com). */
  get url(): string {
    return this.#url;
  }

  /** A call about to be placed: the signal its stream ends on, and the TwiML it is given. */
  follow(callSid: string): { ended: AbortSignal; updates: readonly TwimlUpdate[] } {
    const call: FollowedCall = { ended: new AbortController(), updates: [] };
    this.#calls.set(callSid, call);
    return { ended: call.ended.signal, updates: call.updates };
  }

  forget(callSid: string): void {
    this.#calls.delete(callSid);
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #serve(req: IncomingMessage, res: ServerResponse): void {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      const answer = (status: number, json: Record<string, unknown>) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(json));
      };
      if (req.headers.authorization !== this.#basic)
        return answer(401, { code: 20003, message: "Authenticate", status: 401 });
      const path = `/2010-04-01/Accounts/${this.#accountSid}/Calls/`;
      const sid = req.url?.startsWith(path)
        ? /^(CA[0-9a-f]{32})\.json$/.exec(req.url.slice(path.length))
        : null;
      const call = sid ? this.#calls.get(sid[1]!) : undefined;
      if (req.method !== "POST" || !sid || !call)
        return answer(404, { code: 20404, message: "The requested resource was not found", status: 404 });
      const twiml = new URLSearchParams(body).get("Twiml") ?? "";
      const update = { twiml, ...readCallTwiml(twiml) };
      call.updates.push(update);
      answer(200, {
        sid: sid[1],
        account_sid: this.#accountSid,
        status: "in-progress",
        api_version: "2010-04-01",
        uri: `${path}${sid[1]}.json`,
      });
      // Twilio leaves the <Connect><Stream> for the new TwiML: the stream stops (into a conference, the call goes on there).
      call.ended.abort(update.conference ? this.conferences.join(sid[1]!, update.conference) : undefined);
    });
  }
}
