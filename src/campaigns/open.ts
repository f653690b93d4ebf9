// Where campaigns are kept: beside the call records, in the same database (PostgreSQL when
// DATABASE_URL is set, shared by every bridge on it; else SQLite in the data dir).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../config/config.ts";
import { SQLITE_FILE } from "../records/store/sqlite/store.ts";
import { CampaignStore } from "./store.ts";
import { PostgresCampaignEngine } from "./store-postgres.ts";
import { SqliteCampaignEngine } from "./store-sqlite.ts";

export async function openCampaignStore(config: Config): Promise<CampaignStore> {
  if (config.store.databaseUrl)
    return new CampaignStore(await PostgresCampaignEngine.open(config.store.databaseUrl));
  await mkdir(config.local.dataDir, { recursive: true });
  return new CampaignStore(await SqliteCampaignEngine.open(join(config.local.dataDir, SQLITE_FILE)));
}
