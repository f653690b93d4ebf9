// SIPp as a callee that is always busy: every INVITE gets 486 Busy Here (and its ACK is awaited),
// on a free UDP port of 127.0.0.1, until the test kills it.
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../helpers/free-port.ts";

const BUSY_XML = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="busy">
  <recv request="INVITE" />
  <send><![CDATA[
SIP/2.0 486 Busy Here
[last_Via:]
[last_From:]
[last_To:];tag=[pid]busy[call_number]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>
  <recv request="ACK" />
</scenario>
`;

export async function startBusyCallee(dir: string): Promise<{ port: number; process: ChildProcess }> {
  const file = join(dir, "busy.xml");
  writeFileSync(file, BUSY_XML);
  const port = await freePort();
  const args = ["-sf", file, "-i", "127.0.0.1", "-p", String(port), "-mp", String(await freePort(true))];
  // In the foreground (no -bg, which forks): the test stops it by this process.
  args.push("-cp", String(await freePort()), "-nostdin");
  return { port, process: spawn("sipp", args, { cwd: dir, stdio: "ignore" }) };
}
