import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Postgres } from "../../bench/lib/postgres-server.ts";
import { silentLogger } from "../../src/core/log.ts";
import { PostgresCallStore } from "../../src/records/store/postgres/store.ts";
import { storeContract } from "./store-contract.ts";

let server: Postgres;
beforeAll(async () => {
  server = await Postgres.start();
}, 60_000);
afterAll(() => server?.close());

let n = 0;
const open = async (url: string, instance = "bridge-test") =>
  PostgresCallStore.open({ url, instance, log: silentLogger });

describe("PostgreSQL call store", () => {
  storeContract({ open: async (instance) => open(await server.database(`calls_${n++}`), instance) });

  it("applies the migrations in the repository once, even with two bridges starting together", async () => {
    const url = await server.database("migrations");
    const both = await Promise.all([open(url, "a"), open(url, "b")]);
    for (const store of both) await store.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT version, name FROM schema_migrations ORDER BY version");
      expect(rows).toEqual([
        { version: 1, name: "calls" },
        { version: 2, name: "call_words" },
        { version: 3, name: "outbound" },
      ]);
    } finally {
      await client.end();
    }
  });
});
