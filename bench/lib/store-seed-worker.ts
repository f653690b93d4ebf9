// Seeds the benchmark's stored calls in a worker thread, so the set-up's garbage (100,000 calls'
// words) stays out of the heap whose event loop the benchmark measures.
import { parentPort, workerData } from "node:worker_threads";
import pg from "pg";
import { seedPostgres, seedSqlite } from "./store-seed.ts";

const { engine, target, calls } = workerData as {
  engine: "sqlite" | "postgres";
  target: string;
  calls: number;
};
if (engine === "sqlite") seedSqlite(target, calls);
else {
  const pool = new pg.Pool({ connectionString: target });
  await seedPostgres(pool, calls);
  await pool.end();
}
parentPort!.postMessage("done");
