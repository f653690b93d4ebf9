// What an operator does with campaigns, the same from HTTP, the CLI and the TypeScript API:
// create one from settings and a list, read them with their counts, pause, resume, cancel, add
// rows, change the pace or concurrency while it runs, and take the results as CSV. Every refusal
// names the field (or the list's line and field) at fault.
import { randomBytes } from "node:crypto";
import {
  type Campaign,
  type CampaignCall,
  type CampaignRowInput,
  type CampaignSettings,
  type CampaignView,
  type FieldProblem,
  parseChange,
  parseSettings,
} from "./campaign.ts";
import { ListError, type ListLimits, type ParsedList, parseCsvList, parseJsonList } from "./list-parse.ts";
import { resultsCsv } from "./results-csv.ts";
import type { CampaignScheduler } from "./scheduler.ts";
import type { CampaignStore } from "./store.ts";

export interface ControlDeps {
  readonly store: CampaignStore;
  /** This bridge's scheduler, woken by changes (absent: the bridge does not work campaigns). */
  readonly scheduler: CampaignScheduler | undefined;
  readonly limits: ListLimits;
  /** Calendar time, epoch ms. */
  readonly now: () => number;
  /** Why an agent of that name cannot take calls (undefined: it can). */
  readonly agentProblem: (name: string) => string | undefined;
  /** Why calls cannot be placed through `via` (undefined: they can). */
  readonly dialProblem: (via: "sip" | "twilio") => string | undefined;
}

export type Refusal = { ok: false; status: 400 | 404 | 409 | 413; problems: FieldProblem[] };
export type Outcome<T> = { ok: true; value: T } | Refusal;

/** A list as a request gives it: CSV text (or a stream of it), or JSON rows. */
export type ListSource =
  | { readonly csv: string | AsyncIterable<string | Uint8Array> }
  | { readonly rows: unknown };

export interface Created {
  readonly campaign: CampaignView;
  /** Rows taken. */
  readonly accepted: number;
  /** Rows left out, by line and field. */
  readonly rejected: FieldProblem[];
}

const refuse = (status: Refusal["status"], field: string, message: string): Refusal => ({
  ok: false,
  status,
  problems: [{ field, message }],
});

export class CampaignControl {
  readonly #d: ControlDeps;

  constructor(deps: ControlDeps) {
    this.#d = deps;
  }

  /** POST /campaigns' body: the settings with the list inline (`csv` text or `rows`), `strict` to refuse any bad row. */
  async createFromBody(raw: unknown): Promise<Outcome<Created>> {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw))
      return refuse(
        400,
        "body",
        'expected a JSON object such as {"agent": "default", "csv": "number\\n+15550100\\n"}',
      );
    const { csv, rows, strict, ...settings } = raw as Record<string, unknown>;
    if (strict !== undefined && typeof strict !== "boolean")
      return refuse(400, "strict", "expected true or false");
    const list = listOf(csv, rows);
    if (!list.ok) return list;
    return this.create(settings, list.value, strict === true);
  }

  /** Creates a campaign whole (its settings and good rows), or nothing: a refusal names what was wrong. */
  async create(rawSettings: unknown, list: ListSource, strict = false): Promise<Outcome<Created>> {
    const parsed = parseSettings(rawSettings);
    if (!parsed.ok) return { ok: false, status: 400, problems: parsed.problems };
    const settings = parsed.settings;
    const agent = this.#d.agentProblem(settings.agent);
    if (agent) return refuse(400, "agent", agent);
    const dial = this.#d.dialProblem(settings.via);
    if (dial) return refuse(400, "via", dial);
    const read = await this.#readList(list, settings, []);
    if (!read.ok) return read;
    const { rows, problems } = read.value;
    if (strict && problems.length) return { ok: false, status: 400, problems };
    if (rows.length === 0)
      return {
        ok: false,
        status: 400,
        problems: problems.length ? problems : [{ field: "list", message: "no rows" }],
      };
    const now = this.#d.now();
    const campaign: Campaign = {
      id: `cmp-${randomBytes(8).toString("hex")}`,
      name: settings.name ?? `campaign of ${new Date(now).toISOString()}`,
      status: "running",
      settings,
      createdAt: new Date(now).toISOString(),
    };
    await this.#d.store.create(campaign, rows, now);
    this.#d.scheduler?.wake();
    const view = await this.#d.store.get(campaign.id);
    return { ok: true, value: { campaign: view!, accepted: rows.length, rejected: problems } };
  }

  async #readList(
    list: ListSource,
    settings: CampaignSettings,
    existing: string[],
  ): Promise<Outcome<ParsedList>> {
    try {
      const parsed =
        "csv" in list
          ? await parseCsvList(
              typeof list.csv === "string" ? [list.csv] : list.csv,
              settings.via,
              this.#d.limits,
              existing,
            )
          : parseJsonList(list.rows, settings.via, this.#d.limits, existing);
      return { ok: true, value: parsed };
    } catch (err) {
      if (err instanceof ListError)
        return refuse(err.status, err.field, err.message.slice(err.field.length + 2));
      throw err;
    }
  }

  list(): Promise<CampaignView[]> {
    return this.#d.store.list();
  }

  get(id: string): Promise<CampaignView | undefined> {
    return this.#d.store.get(id);
  }

  pause(id: string): Promise<Outcome<CampaignView>> {
    return this.#transition(id, "paused", ["running"]);
  }

  resume(id: string): Promise<Outcome<CampaignView>> {
    return this.#transition(id, "running", ["paused"]);
  }

  /** Cancels the rows not called yet and hangs up the campaign's calls in progress. */
  async cancel(id: string): Promise<Outcome<CampaignView>> {
    const done = await this.#transition(id, "canceled", ["running", "paused"]);
    if (done.ok) this.#d.scheduler?.cancelCalls(id);
    return done;
  }

  async #transition(
    id: string,
    to: Campaign["status"],
    from: Campaign["status"][],
  ): Promise<Outcome<CampaignView>> {
    const c = await this.#d.store.setStatus(id, to, this.#d.now());
    if (!c) return refuse(404, "id", `no campaign ${id}`);
    if (c.status !== to)
      return refuse(
        409,
        "status",
        `the campaign is ${c.status}: it cannot be made ${to} (only from ${from.join(" or ")})`,
      );
    this.#d.scheduler?.wake();
    return { ok: true, value: (await this.#d.store.get(id))! };
  }

  /** More rows for a campaign (a number already in it is a duplicate); a completed one runs again. */
  async addRows(
    id: string,
    raw: unknown,
  ): Promise<Outcome<Omit<Created, "campaign"> & { campaign: CampaignView }>> {
    const c = await this.#d.store.get(id);
    if (!c) return refuse(404, "id", `no campaign ${id}`);
    const body = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
    const list = listOf(body.csv, body.rows);
    if (!list.ok) return list;
    return this.addList(c, list.value);
  }

  async addList(c: CampaignView, list: ListSource): Promise<Outcome<Created>> {
    if (c.status === "canceled") return refuse(409, "status", "the campaign is canceled");
    const read = await this.#readList(list, c.settings, await this.#d.store.numbers(c.id));
    if (!read.ok) return read;
    const { rows, problems } = read.value;
    if (c.counts.rows + rows.length > this.#d.limits.maxRows)
      return refuse(
        400,
        "list",
        `the campaign would hold more than ${this.#d.limits.maxRows} rows (campaigns.maxRows)`,
      );
    await this.#d.store.addRows(c.id, rows, this.#d.now());
    this.#d.scheduler?.forgetZones(c.id);
    this.#d.scheduler?.wake();
    return {
      ok: true,
      value: { campaign: (await this.#d.store.get(c.id))!, accepted: rows.length, rejected: problems },
    };
  }

  /** PATCH /campaigns/:id: pace, concurrency, calling hours, end; taken at every bridge's next claim. */
  async update(id: string, raw: unknown): Promise<Outcome<CampaignView>> {
    const parsed = parseChange(raw);
    if (!parsed.ok) return { ok: false, status: 400, problems: parsed.problems };
    const c = await this.#d.store.updateSettings(id, parsed.change);
    if (!c) return refuse(404, "id", `no campaign ${id}`);
    this.#d.scheduler?.wake();
    return { ok: true, value: (await this.#d.store.get(id))! };
  }

  /** The campaign's latest attempts and their calls, newest first (`limit` 1–500). */
  async calls(id: string, limit: unknown): Promise<Outcome<{ calls: CampaignCall[] }>> {
    const n = limit === undefined ? 50 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 500)
      return refuse(400, "limit", "expected a whole number from 1 to 500");
    if (!(await this.#d.store.get(id))) return refuse(404, "id", `no campaign ${id}`);
    return { ok: true, value: { calls: await this.#d.store.calls(id, n) } };
  }

  /** The results as CSV; undefined when there is no such campaign. */
  async resultsCsv(id: string): Promise<string | undefined> {
    if (!(await this.#d.store.get(id))) return undefined;
    return resultsCsv(await this.#d.store.results(id));
  }
}

function listOf(csv: unknown, rows: unknown): Outcome<ListSource> {
  if (csv !== undefined && rows !== undefined)
    return refuse(400, "csv", "send the list as csv or as rows, not both");
  if (typeof csv === "string") return { ok: true, value: { csv } };
  if (csv !== undefined) return refuse(400, "csv", "expected the CSV list as text");
  if (rows !== undefined) return { ok: true, value: { rows } };
  return refuse(
    400,
    "list",
    "expected the list: csv (CSV text with a number column) or rows ([{number, timeZone?, variables?}])",
  );
}

export type { CampaignRowInput };
