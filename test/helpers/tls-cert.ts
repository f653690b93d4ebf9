// A throwaway self-signed certificate for a test server speaking TLS (the fake voice gateway, an HTTPS service):
// EC P-256 with an IP SAN of 127.0.0.1, made by openssl since node:crypto cannot write X.509. A process that
// connects to it must trust it: NODE_EXTRA_CA_CERTS=<certPath> for a child process (read at start-up), or
// trustInThisProcess() for in-process clients (tls.setDefaultCACertificates, Node ≥ 22.19 / 24.5).

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getCACertificates, setDefaultCACertificates } from "node:tls";

export interface SelfSignedCert {
  dir: string;
  certPath: string;
  cert: string;
  key: string;
}

export function makeSelfSignedCert(): SelfSignedCert {
  const dir = mkdtempSync(join(tmpdir(), "test-tls-"));
  const certPath = join(dir, "cert.pem");
  const keyPath = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-days",
      "2",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  return { dir, certPath, cert: readFileSync(certPath, "utf8"), key: readFileSync(keyPath, "utf8") };
}

/** Adds the certificate to this process's default trust store (keeps the bundled and extra CAs). */
export function trustInThisProcess(cert: string): void {
  const current = getCACertificates("default");
  if (!current.includes(cert)) setDefaultCACertificates([...current, cert]);
}

export function removeCert(cert: SelfSignedCert): void {
  rmSync(cert.dir, { recursive: true, force: true });
}
