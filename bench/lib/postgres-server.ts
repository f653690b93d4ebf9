// A real PostgreSQL server for a test file or the store benchmark (Debian's postgresql 15, installed by
// scripts/bootstrap.sh): its own cluster in a temp dir owned by the postgres user (initdb refuses
// root), a private TCP port on 127.0.0.1 and a private socket dir. Stopped and removed at close;
// stop()/start() let a test take the database away mid-call and bring it back.
import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const BIN = "/usr/lib/postgresql/15/bin";

/** Runs a PostgreSQL program as the postgres user (we are root in CI), or as ourselves otherwise. */
async function pgRun(program: string, args: string[]): Promise<void> {
  const asRoot = userInfo().uid === 0;
  const [cmd, argv] = asRoot
    ? ["runuser", ["-u", "postgres", "--", join(BIN, program), ...args]]
    : [join(BIN, program), args];
  await run(cmd, argv, { timeout: 60_000 });
}

export class Postgres {
  readonly dir: string;
  readonly port: number;
  #running = false;

  private constructor(dir: string, port: number) {
    this.dir = dir;
    this.port = port;
  }

  static async start(): Promise<Postgres> {
    const dir = mkdtempSync(join(tmpdir(), "vb-pg-"));
    if (userInfo().uid === 0) {
      const { uid, gid } = await pgIds();
      chownSync(dir, uid, gid);
    }
    await pgRun("initdb", ["-D", join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync"]);
    const pg = new Postgres(dir, await freePort());
    await pg.start();
    return pg;
  }

  /** A database URL for a new, empty database on this server. */
  async database(name: string): Promise<string> {
    await pgRun("createdb", ["-h", "127.0.0.1", "-p", String(this.port), "-U", "postgres", name]);
    return this.url(name);
  }

  url(name: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${name}`;
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
    await pgRun("pg_ctl", [
      "-D",
      join(this.dir, "data"),
      "-o",
      options,
      "-l",
      join(this.dir, "log"),
      "-w",
      "start",
    ]);
    this.#running = true;
  }

  /** Stops the server at once (connections dropped), as a crash or an outage would. */
  async stop(): Promise<void> {
    await pgRun("pg_ctl", ["-D", join(this.dir, "data"), "-m", "immediate", "-w", "stop"]);
    this.#running = false;
  }

  async close(): Promise<void> {
    if (this.#running) await this.stop().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function pgIds(): Promise<{ uid: number; gid: number }> {
  const { stdout } = await run("id", ["postgres"]);
  const uid = /uid=(\d+)/.exec(stdout)?.[1];
  const gid = /gid=(\d+)/.exec(stdout)?.[1];
  if (!uid || !gid)
    throw new Error(`no postgres user (install Debian's postgresql: scripts/bootstrap.sh): ${stdout}`);
  return { uid: Number(uid), gid: Number(gid) };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
