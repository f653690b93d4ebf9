// `voice-bridge campaign …`: the running bridge's /campaigns from the command line. A list file
// is checked against the size limit before it is read (a 100 MB file is refused at once), then
// sent as CSV text or JSON rows; each answer is printed in a few lines, refusals with every
// problem by line and field.
import { readFile, stat } from "node:fs/promises";
import type { CampaignView, FieldProblem } from "./campaign.ts";

export interface CommandOptions {
  readonly base: string;
  readonly token: string | undefined;
  readonly out: (line: string) => void;
}

/** `mon-fri 09:00-18:00` → the calling hours' days, from and to. */
export function parseHours(s: string): { days: string; from: string; to: string } {
  const m = /^\s*([a-z,-]+)\s+(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*$/i.exec(s);
  if (!m) throw new Error(`--hours ${s}: expected days and times such as "mon-fri 09:00-18:00"`);
  const pad = (t: string) => t.padStart(5, "0");
  return { days: m[1]!.toLowerCase(), from: pad(m[2]!), to: pad(m[3]!) };
}

/** Repeated `--retry busy=3/600`: outcome=attempts/delay seconds. */
export function parseRetries(list: readonly string[]): Record<string, { attempts: number; delayS?: number }> {
  const out: Record<string, { attempts: number; delayS?: number }> = {};
  for (const item of list) {
    const m = /^([a-z-]+)=(\d+)(?:\/(\d+(?:\.\d+)?))?$/.exec(item.trim());
    if (!m) throw new Error(`--retry ${item}: expected OUTCOME=ATTEMPTS[/DELAY_S], such as busy=3/600`);
    out[m[1]!] = { attempts: Number(m[2]), ...(m[3] ? { delayS: Number(m[3]) } : {}) };
  }
  return out;
}

/** The list in `file` as the request's `csv` or `rows`, refused before reading when over `maxBytes`. */
export async function readListFile(
  file: string,
  maxBytes: number,
): Promise<{ csv: string } | { rows: unknown }> {
  const { size } = await stat(file);
  if (size > maxBytes)
    throw new Error(
      `${file}: ${size} bytes, over the bridge's limit of ${maxBytes} (campaigns.maxListBytes); split the list and add the rest with 'campaign add'`,
    );
  const text = await readFile(file, "utf8");
  if (/\.json$/i.test(file)) {
    try {
      return { rows: JSON.parse(text) as unknown };
    } catch (err) {
      throw new Error(`${file}: not JSON (${(err as Error).message})`);
    }
  }
  return { csv: text };
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the bridge's JSON answers, printed as they come
  json: any;
  text: string;
}

export async function request(
  o: CommandOptions,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${o.base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** Prints a refusal (every problem) and returns the exit code 1, or 0 when `ok`. */
export function said(o: CommandOptions, r: Answer): number {
  if (r.status < 300) return 0;
  const error = r.json?.error as { message?: string; problems?: FieldProblem[] } | undefined;
  o.out(`refused (HTTP ${r.status}): ${error?.message ?? r.text}`);
  for (const p of error?.problems?.slice(1, 50) ?? [])
    o.out(`  ${p.line !== undefined ? `line ${p.line}: ` : ""}${p.field}: ${p.message}`);
  return 1;
}

export function describeCampaign(c: CampaignView): string {
  const by = (m: Record<string, number | undefined>) =>
    Object.entries(m)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ") || "none";
  const s = c.settings;
  return [
    `${c.id}  ${c.name}  [${c.status}${c.pausedReason ? `: ${c.pausedReason}` : ""}]`,
    `  agent ${s.agent} via ${s.via}; ${s.pacePerMinute} calls/min, ${s.concurrency} at once; hours ${s.callingHours.days.join(",")} ${s.callingHours.from}-${s.callingHours.to} (${s.callingHours.in}'s clock, campaign zone ${s.timeZone})`,
    `  rows ${c.counts.rows}: ${by(c.counts.byStatus)}; outcomes: ${by(c.counts.byOutcome)}; calls placed ${c.counts.attempts}`,
  ].join("\n");
}

/** Prints a created campaign (or rows added) with the rows left out. */
export function describeCreated(o: CommandOptions, r: Answer): void {
  o.out(describeCampaign(r.json.campaign as CampaignView));
  o.out(`  taken ${r.json.accepted} rows, left out ${r.json.rejected.length}`);
  for (const p of (r.json.rejected as FieldProblem[]).slice(0, 50))
    o.out(`  line ${p.line}: ${p.field}: ${p.message}`);
  if (r.json.rejected.length > 50) o.out(`  … and ${r.json.rejected.length - 50} more`);
}
