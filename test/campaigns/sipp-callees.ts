// SIPp as the many callees of a campaign, cheaply (one process per behaviour, no media): one
// answers and hangs up 1.2 s later (a person who picks up and puts the phone down before anyone
// spoke: the bridge's machine detection has not decided, the call is filed as answered), one is
// always busy (486), one rings until the caller gives up (CANCEL, 487). Each
// logs every call it gets (the number dialled, the Call-ID), so a test counts what the callees
// saw, not what the caller says it did.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../helpers/free-port.ts";

export type CalleeKind = "answers" | "busy" | "rings";

/**
 * On each INVITE: the number dialled (the To user, which the trunk keeps) and the Call-ID, logged;
 * `keep`, what the scenario reuses later (SIPp refuses a variable set and never read).
 */
function onInvite(keep: string): string {
  return `<recv request="INVITE" rrs="true">
    <action>
      <ereg regexp="sip:([^@;>]+)" search_in="hdr" header="To:" assign_to="to_uri,number" />
      ${keep}
      <log message="CALLEE [$number] [call_id] [$to_uri]" />
    </action>
  </recv>`;
}

function reply(status: string, tag: string): string {
  return `<send><![CDATA[
SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]${tag}[call_number]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>`;
}

const SCENARIOS: Record<CalleeKind, string> = {
  busy: `${onInvite("")}
  ${reply("486 Busy Here", "busy")}
  <recv request="ACK" />`,
  // The 487 answers the INVITE, with its Vias (the trunk's and the bridge's: one proxy between), not
  // the CANCEL's, which the trunk sent hop by hop.
  rings: `${onInvite(`<ereg regexp="[0-9]+" search_in="hdr" header="CSeq:" assign_to="cseq" />
      <ereg regexp=".*" search_in="hdr" header="Via:" occurrence="1" assign_to="via1" />
      <ereg regexp=".*" search_in="hdr" header="Via:" occurrence="2" assign_to="via2" />`)}
  ${reply("180 Ringing", "ring")}
  <recv request="CANCEL" />
  ${reply("200 OK", "ring")}
  <send><![CDATA[
SIP/2.0 487 Request Terminated
Via:[$via1]
Via:[$via2]
[last_From:]
[last_To:];tag=[pid]ring[call_number]
[last_Call-ID:]
CSeq: [$cseq] INVITE
Content-Length: 0

]]></send>
  <recv request="ACK" />`,
  answers: `${onInvite('<ereg regexp=".*" search_in="hdr" header="From:" assign_to="caller" /><ereg regexp=".*" search_in="hdr" header="To:" assign_to="callee" />')}
  <send retrans="500"><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]ans[call_number]
[last_Call-ID:]
[last_CSeq:]
[last_Record-Route:]
Contact: <sip:[local_ip]:[local_port];transport=[transport]>
Content-Type: application/sdp
Content-Length: [len]

v=0
o=callee 1 1 IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000

]]></send>
  <recv request="ACK" />
  <pause milliseconds="1200" />
  <send retrans="500"><![CDATA[
BYE [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From:[$callee];tag=[pid]ans[call_number]
To:[$caller]
[routes]
Call-ID: [call_id]
CSeq: 2 BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
  <recv response="200" />`,
};

export class SippCallee {
  readonly kind: CalleeKind;
  readonly port: number;
  readonly process: ChildProcess;
  readonly #logFile: string;

  private constructor(kind: CalleeKind, port: number, process: ChildProcess, logFile: string) {
    this.kind = kind;
    this.port = port;
    this.process = process;
    this.#logFile = logFile;
  }

  static async start(dir: string, kind: CalleeKind): Promise<SippCallee> {
    const file = join(dir, `${kind}.xml`);
    writeFileSync(
      file,
      `<?xml version="1.0" encoding="ISO-8859-1" ?>\n<scenario name="${kind}">\n  ${SCENARIOS[kind]}\n</scenario>\n`,
    );
    const port = await freePort();
    const logFile = join(dir, `${kind}.log`);
    const args = ["-sf", file, "-i", "127.0.0.1", "-p", String(port), "-mp", String(await freePort(true))];
    // In the foreground (no -bg, which forks): stopped by this process. Calls at once: a campaign's.
    args.push("-cp", String(await freePort()), "-nostdin", "-trace_logs", "-log_file", logFile);
    const child = spawn("sipp", args, { cwd: dir, stdio: "ignore" });
    return new SippCallee(kind, port, child, logFile);
  }

  /** Distinct calls received per number dialled, as logged so far. */
  calls(): Record<string, number> {
    let text = "";
    try {
      text = readFileSync(this.#logFile, "utf8");
    } catch {
      return {};
    }
    const seen = new Map<string, Set<string>>();
    for (const m of text.matchAll(/CALLEE (\S+) (\S+)/g)) {
      const ids = seen.get(m[1]!) ?? new Set<string>();
      ids.add(m[2]!);
      seen.set(m[1]!, ids);
    }
    return Object.fromEntries([...seen].map(([n, ids]) => [n, ids.size]));
  }

  stop(): void {
    this.process.kill("SIGKILL");
  }
}
