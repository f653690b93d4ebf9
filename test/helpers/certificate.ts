// A self-signed certificate for TLS tests (openssl, installed by the set-up): what a test CA would
// issue for these addresses; the peers under test are told to trust it.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export function selfSignedCertificate(
  dir: string,
  ips: readonly string[] = ["127.0.0.1"],
): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2"].concat([
      "-subj",
      `/CN=${ips[0]}`,
      "-addext",
      `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(",")}`,
    ]),
    { stdio: "ignore" },
  );
  return { cert, key };
}
