// A self-signed certificate for the fake voice gateway (the library only connects over wss://),
// made with openssl for 127.0.0.1, and trusted by this process through the default CA list.
// A bridge run as a child process trusts it through NODE_EXTRA_CA_CERTS=certPath instead.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";

export interface TestCertificate {
  key: string;
  cert: string;
  certPath: string;
}

let made: TestCertificate | undefined;

export function testCertificate(): TestCertificate {
  if (made) return made;
  const dir = mkdtempSync(join(tmpdir(), "fake-discord-tls-"));
  const keyPath = join(dir, "key.pem");
  const certPath = join(dir, "cert.pem");
  const r = spawnSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "2",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-keyout",
    keyPath,
    "-out",
    certPath,
  ]);
  if (r.status !== 0) throw new Error(`openssl could not make a test certificate: ${r.stderr.toString()}`);
  made = { key: readFileSync(keyPath, "utf8"), cert: readFileSync(certPath, "utf8"), certPath };
  return made;
}

/** Makes this process trust the test certificate (what NODE_EXTRA_CA_CERTS does at start-up). */
export function trustTestCertificate(): TestCertificate {
  const c = testCertificate();
  const defaults = tls.getCACertificates("default");
  if (!defaults.includes(c.cert)) tls.setDefaultCACertificates([...defaults, c.cert]);
  return c;
}
