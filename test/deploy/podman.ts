// The container image for tests, for real: Debian's podman (daemonless; this machine has no
// Docker engine) with the flags it needs on this kernel (runc, cgroupfs, chroot isolation, the
// ulimits runc may set), and a base image made here from Debian's own packages with mmdebstrap,
// since no container registry is reachable. The base is made once per machine and kept. It also
// trusts what this machine trusts: the certificate authorities added under
// /usr/local/share/ca-certificates (this workplace reaches the registries through a proxy whose
// CA is there), for apt and, through NODE_EXTRA_CA_CERTS, for npm and Node in the build.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const GLOBAL = ["--runtime", "runc", "--cgroup-manager=cgroupfs"];
export const BASE_IMAGE = "localhost/voice-bridge-base:bookworm-ca";
const EXTRA_CAS = "/usr/local/share/ca-certificates";
export const IMAGE = "localhost/voice-bridge:test";
const ROOT = join(import.meta.dirname, "..", "..");

/** Runs podman; rejects with its stderr when it fails. */
export async function podman(args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run("podman", [...GLOBAL, ...args], {
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as Error & { stderr?: string; stdout?: string };
    throw new Error(`podman ${args.join(" ")}: ${e.message}\n${(e.stderr ?? "").slice(-4000)}`);
  }
}

/** podman's exit code for `args` (e.g. `image exists`, `healthcheck run`). */
export function podmanStatus(args: string[]): number | null {
  return spawnSync("podman", [...GLOBAL, ...args], { stdio: "ignore" }).status;
}

/** A minimal Debian bookworm image from Debian's packages (about a minute, once per machine). */
export async function ensureBaseImage(): Promise<void> {
  if (podmanStatus(["image", "exists", BASE_IMAGE]) === 0) return;
  const dir = mkdtempSync(join(tmpdir(), "vb-base-"));
  try {
    const tar = join(dir, "rootfs.tar");
    const hasCas = existsSync(EXTRA_CAS) && readdirSync(EXTRA_CAS).some((f) => f.endsWith(".crt"));
    const hooks = hasCas
      ? [
          `--customize-hook=copy-in ${EXTRA_CAS} /usr/local/share`,
          '--customize-hook=chroot "$1" update-ca-certificates',
        ]
      : [];
    await run("mmdebstrap", ["--variant=minbase", "--include=ca-certificates", ...hooks, "bookworm", tar], {
      timeout: 10 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    await podman(
      ["import", "--change", "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt", tar, BASE_IMAGE],
      5 * 60_000,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Builds the project's Dockerfile on that base; layers are cached, so a code change rebuilds only the code. */
export async function buildImage(): Promise<void> {
  await podman(
    [
      "build",
      // Docker's image format: OCI images have no HEALTHCHECK, and podman drops it from them.
      "--format",
      "docker",
      "--isolation=chroot",
      // The ffmpeg and build stages at once: one compiles while the other mostly downloads.
      "--jobs",
      "2",
      "--network",
      "host",
      "--build-arg",
      `BASE=${BASE_IMAGE}`,
      "-t",
      IMAGE,
      ROOT,
    ],
    25 * 60_000,
  );
}

/** Starts the image detached on the host's network; returns the container's name. */
export async function runImage(name: string, env: Record<string, string>): Promise<string> {
  const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  await podman([
    "run",
    "-d",
    "--name",
    name,
    "--network",
    "host",
    "--ulimit",
    "nofile=4096:4096",
    "--ulimit",
    "nproc=4096:4096",
    ...envArgs,
    IMAGE,
  ]);
  return name;
}

export async function logs(name: string): Promise<string> {
  try {
    const { stdout, stderr } = await run("podman", [...GLOBAL, "logs", name], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout + stderr;
  } catch (err) {
    return `(no logs: ${(err as Error).message})`;
  }
}

export async function remove(name: string): Promise<void> {
  await podman(["rm", "-f", "-t", "0", name]).catch(() => undefined);
}
