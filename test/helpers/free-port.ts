// Ports for tests that must name one before something listens on it (a child process's config, a
// receiver that comes up later). Test files run in parallel, and other checkouts' tests on the same
// machine: a port drawn from the kernel's ephemeral range (32768–60999 on Linux, what binding to
// port 0 gives) was free when checked, then handed to another test's socket before it was used
// (SIPp: "Unable to bind remote control socket"; a report receiver "down" answered by another
// test's server). Ports below that range are given to no socket unasked.
import { createSocket } from "node:dgram";
import { createServer } from "node:net";

const PORTS_FROM = 20_000;
const PORTS_TO = 32_000;

/**
 * A port free right now on 127.0.0.1 for UDP and TCP alike (SIPp's main socket is TCP with -t t1;
 * a port some TCP connection holds, on a busy machine, makes it exit with "Address already in
 * use"). `even`: it and port+2 free for UDP, for SIPp's media sockets.
 */
export async function freePort(even = false): Promise<number> {
  for (;;) {
    let port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM));
    if (even) port -= port % 2;
    if (!(await udpBindable(port)) || !(await tcpBindable(port))) continue;
    if (!even || (await udpBindable(port + 2))) return port;
  }
}

export async function tcpBindable(port: number): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (ok) await new Promise((r) => server.close(r));
  return ok;
}

async function udpBindable(port: number): Promise<boolean> {
  const s = createSocket("udp4");
  const ok = await new Promise<boolean>((resolve) => {
    s.once("error", () => resolve(false));
    s.bind(port, "127.0.0.1", () => resolve(true));
  });
  if (ok) s.close();
  return ok;
}
