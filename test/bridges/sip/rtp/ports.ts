// Finding room for an RTP port range in tests: test files run in parallel (and other checkouts'
// tests on the same machine), so each picks a random stretch below the ephemeral range and
// checks that its ports are free before using it.
import dgram from "node:dgram";

export function bindUdp(port: number, host = "127.0.0.1"): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket("udp4");
    s.once("error", (err) => {
      s.close();
      reject(err);
    });
    s.bind(port, host, () => resolve(s));
  });
}

/** A base even port such that `evenPorts` even ports from it were all free a moment ago. */
export async function freeEvenRange(evenPorts: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20000 + 2 * Math.floor(Math.random() * 5000);
    const held: dgram.Socket[] = [];
    try {
      for (let i = 0; i < evenPorts; i++) held.push(await bindUdp(base + 2 * i));
      return base;
    } catch {
      // taken: try elsewhere
    } finally {
      await Promise.all(held.map((s) => new Promise<void>((r) => s.close(() => r()))));
    }
  }
  throw new Error(`no free stretch of ${evenPorts} even UDP ports found between 20000 and 30000`);
}
