// The library's campaigns: the same operations as /campaigns (one control, CampaignControl), as
// promises; a refusal is a CampaignError carrying what the HTTP route would have answered (the
// status, the field at fault, every problem by line and field).
import type { z } from "zod";
import type {
  CampaignCall,
  CampaignChange,
  CampaignView,
  campaignSettingsSchema,
  FieldProblem,
} from "../../src/campaigns/campaign.ts";
import type { CampaignControl, Created, ListSource, Outcome } from "../../src/campaigns/control.ts";

/** A campaign's settings as createBridge().campaigns.create takes them (defaults filled in). */
export type CampaignSettingsInput = z.input<typeof campaignSettingsSchema>;

export class CampaignError extends Error {
  override readonly name = "CampaignError";
  /** The status /campaigns answers for the same refusal. */
  readonly status: 400 | 404 | 409 | 413;
  /** Each problem: the field (and, for a row, its line) and what was wrong. */
  readonly problems: FieldProblem[];

  constructor(status: CampaignError["status"], problems: FieldProblem[]) {
    const first = problems[0];
    super(
      first
        ? `${first.line !== undefined ? `line ${first.line}: ` : ""}${first.field}: ${first.message}`
        : "refused",
    );
    this.status = status;
    this.problems = problems;
  }
}

export interface Campaigns {
  /** Creates a campaign from its settings and a list (CSV text or stream, or JSON rows); `strict` refuses any bad row. */
  create(settings: CampaignSettingsInput, list: ListSource, options?: { strict?: boolean }): Promise<Created>;
  list(): Promise<CampaignView[]>;
  get(id: string): Promise<CampaignView | undefined>;
  pause(id: string): Promise<CampaignView>;
  resume(id: string): Promise<CampaignView>;
  cancel(id: string): Promise<CampaignView>;
  addRows(id: string, list: ListSource): Promise<Created>;
  /** Pace, concurrency, calling hours or end, while it runs. */
  update(id: string, change: CampaignChange): Promise<CampaignView>;
  /** The latest attempts and their calls, newest first (`limit` 1–500, default 50). */
  calls(id: string, options?: { limit?: number }): Promise<CampaignCall[]>;
  /** The results as CSV (one line per callee). */
  results(id: string): Promise<string>;
}

async function value<T>(done: Promise<Outcome<T>>): Promise<T> {
  const r = await done;
  if (!r.ok) throw new CampaignError(r.status, r.problems);
  return r.value;
}

export function campaignsOf(control: () => CampaignControl | undefined): Campaigns {
  const c = () => {
    const found = control();
    if (!found)
      throw new CampaignError(409, [
        { field: "campaigns.enabled", message: "campaigns are off on this bridge" },
      ]);
    return found;
  };
  return {
    create: (settings, list, options) => value(c().create(settings, list, options?.strict === true)),
    list: () => c().list(),
    get: (id) => c().get(id),
    pause: (id) => value(c().pause(id)),
    resume: (id) => value(c().resume(id)),
    cancel: (id) => value(c().cancel(id)),
    addRows: async (id, list) => {
      const found = await c().get(id);
      if (!found) throw new CampaignError(404, [{ field: "id", message: `no campaign ${id}` }]);
      return value(c().addList(found, list));
    },
    update: (id, change) => value(c().update(id, change)),
    calls: async (id, options) => (await value(c().calls(id, options?.limit))).calls,
    results: async (id) => {
      const csv = await c().resultsCsv(id);
      if (csv === undefined) throw new CampaignError(404, [{ field: "id", message: `no campaign ${id}` }]);
      return csv;
    },
  };
}
