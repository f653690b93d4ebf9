import { afterAll, beforeAll, describe } from "vitest";
import { Postgres } from "../../bench/lib/postgres-server.ts";
import { silentLogger } from "../../src/log.ts";
import { PostgresCallStore } from "../../src/store/postgres/store.ts";
import { storeContract } from "./store-contract.ts";

let server: Postgres;
beforeAll(async () => {
  server = await Postgres.start();
}, 60_000);
afterAll(() => server?.close());

let n = 0;
describe("PostgreSQL call store", () => {
  storeContract({
    open: async (instance = "bridge-test") =>
      PostgresCallStore.open({ url: await server.database(`calls_${n++}`), instance, log: silentLogger }),
  });
});
