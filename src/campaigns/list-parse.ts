// A campaign's list of callees, as CSV (a header row naming `number` and optionally `timezone`;
// every other column is a variable of the agent's templates) or JSON (an array of
// {number, timeZone?, variables?}). Read as a stream: a list over the byte limit is refused as
// soon as the limit is passed, never held whole. A bad row is reported by its line and field and
// the rest are taken; a number seen before (in this list or the campaign) is a duplicate.
import type { DialVia } from "../outbound/request.ts";
import { dialTarget } from "../outbound/request.ts";
import { validZone } from "./calling-hours.ts";
import { type CampaignRowInput, type FieldProblem, validVarName } from "./campaign.ts";

export interface ListLimits {
  readonly maxBytes: number;
  readonly maxRows: number;
}

export interface ParsedList {
  readonly rows: CampaignRowInput[];
  /** Rows left out, each with its line and field. */
  readonly problems: FieldProblem[];
}

/** The list as a whole cannot be taken (too large, no `number` column): nothing of it is. */
export class ListError extends Error {
  override readonly name = "ListError";
  readonly field: string;
  /** 413 for a list over the byte limit, else 400. */
  readonly status: 400 | 413;
  constructor(field: string, message: string, status: 400 | 413 = 400) {
    super(`${field}: ${message}`);
    this.field = field;
    this.status = status;
  }
}

const NUMBER_COLUMNS = ["number", "phone", "phone_number", "to"];
const ZONE_COLUMNS = ["timezone", "time_zone", "tz"];

/** Checks rows one by one: the number, the zone, the variables, duplicates. */
class RowChecker {
  readonly rows: CampaignRowInput[] = [];
  readonly problems: FieldProblem[] = [];
  readonly #seen = new Map<string, number>();
  readonly #via: DialVia;
  readonly #maxRows: number;

  constructor(via: DialVia, maxRows: number, existing: Iterable<string>) {
    this.#via = via;
    this.#maxRows = maxRows;
    for (const n of existing) this.#seen.set(n, 0);
  }

  take(line: number, rawNumber: unknown, zone: unknown, variables: Record<string, string>): void {
    const bad = (field: string, message: string) => this.problems.push({ line, field, message });
    if (typeof rawNumber !== "string" || rawNumber.trim() === "") return void bad("number", "missing");
    const number = dialTarget(rawNumber, this.#via);
    if (!number)
      return void bad(
        "number",
        `expected a phone number such as +15550100, got ${JSON.stringify(rawNumber)}`,
      );
    let timeZone: string | undefined;
    if (zone !== undefined && zone !== null && zone !== "") {
      if (typeof zone !== "string" || !validZone(zone.trim()))
        return void bad(
          "timezone",
          `expected an IANA time zone such as Europe/Paris, got ${JSON.stringify(zone)}`,
        );
      timeZone = zone.trim();
    }
    const first = this.#seen.get(number);
    if (first !== undefined)
      return void bad(
        "number",
        first === 0 ? `${number} is already in the campaign` : `${number} duplicates line ${first}`,
      );
    if (this.rows.length >= this.#maxRows)
      throw new ListError("list", `more than ${this.#maxRows} rows (campaigns.maxRows)`);
    this.#seen.set(number, line);
    this.rows.push({ number, variables, line, ...(timeZone ? { timeZone } : {}) });
  }
}

/** Splits CSV text into records as it streams in (RFC 4180: quotes, "" escapes, newlines in quotes). */
class CsvSplitter {
  #field = "";
  #record: string[] = [];
  #quoted = false;
  #afterQuote = false;
  #line = 1;
  #recordLine = 1;
  #any = false;

  /** Feeds text; calls `emit` with each whole record and the line it began on. */
  feed(text: string, emit: (fields: string[], line: number) => void): void {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (this.#quoted) {
        if (c === '"') {
          if (text[i + 1] === '"') {
            this.#field += '"';
            i++;
          } else if (i + 1 === text.length) {
            // A quote at the chunk's end: whether it closes or escapes is known with the next chunk.
            this.#quoted = false;
            this.#afterQuote = true;
          } else {
            this.#quoted = false;
          }
        } else {
          if (c === "\n") this.#line++;
          this.#field += c;
        }
        continue;
      }
      if (this.#afterQuote) {
        this.#afterQuote = false;
        if (c === '"') {
          this.#field += '"';
          this.#quoted = true;
          continue;
        }
      }
      if (c === '"' && this.#field === "") {
        this.#quoted = true;
        this.#any = true;
      } else if (c === ",") {
        this.#record.push(this.#field);
        this.#field = "";
        this.#any = true;
      } else if (c === "\n") {
        this.#end(emit);
        this.#line++;
        this.#recordLine = this.#line;
      } else if (c !== "\r") {
        this.#field += c;
        this.#any = true;
      }
    }
  }

  finish(emit: (fields: string[], line: number) => void): void {
    if (this.#quoted) throw new ListError(`line ${this.#recordLine}`, "a quoted field is never closed");
    this.#end(emit);
  }

  #end(emit: (fields: string[], line: number) => void): void {
    if (this.#any) emit([...this.#record, this.#field], this.#recordLine);
    this.#record = [];
    this.#field = "";
    this.#any = false;
  }
}

/** Reads a CSV list from chunks (a file stream, a request body) without holding more than a row. */
export async function parseCsvList(
  chunks: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  via: DialVia,
  limits: ListLimits,
  existing: Iterable<string> = [],
): Promise<ParsedList> {
  const check = new RowChecker(via, limits.maxRows, existing);
  const splitter = new CsvSplitter();
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let header: { number: number; zone: number; vars: [number, string][] } | undefined;
  let bytes = 0;
  const emit = (fields: string[], line: number) => {
    if (!header) {
      header = headerOf(fields);
      return;
    }
    const vars: Record<string, string> = {};
    for (const [i, name] of header.vars) if (fields[i]) vars[name] = fields[i]!;
    check.take(line, fields[header.number] ?? "", header.zone >= 0 ? fields[header.zone] : undefined, vars);
  };
  let first = true;
  for await (const chunk of chunks) {
    bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (bytes > limits.maxBytes)
      throw new ListError("list", `larger than ${limits.maxBytes} bytes (campaigns.maxListBytes)`, 413);
    let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    first = false;
    splitter.feed(text, emit);
  }
  splitter.feed(decoder.decode(), emit);
  splitter.finish(emit);
  if (!header)
    throw new ListError(
      "list",
      "empty: expected a header row naming the number column, then one row per callee",
    );
  return { rows: check.rows, problems: check.problems };
}

function headerOf(fields: string[]): { number: number; zone: number; vars: [number, string][] } {
  const names = fields.map((f) => f.trim());
  const lower = names.map((n) => n.toLowerCase());
  const number = lower.findIndex((n) => NUMBER_COLUMNS.includes(n));
  if (number < 0)
    throw new ListError(
      "line 1",
      `no number column: expected a header naming one of ${NUMBER_COLUMNS.join(", ")} (got ${names.join(", ")})`,
    );
  const zone = lower.findIndex((n) => ZONE_COLUMNS.includes(n));
  const vars: [number, string][] = [];
  names.forEach((name, i) => {
    if (i === number || i === zone) return;
    if (!validVarName(name))
      throw new ListError(
        `line 1: column ${i + 1}`,
        `"${name}" is not a variable name (letters, digits, _ . -)`,
      );
    vars.push([i, name]);
  });
  return { number, zone, vars };
}

/** A JSON list: an array of {number, timeZone?, variables?}. */
export function parseJsonList(
  list: unknown,
  via: DialVia,
  limits: ListLimits,
  existing: Iterable<string> = [],
): ParsedList {
  if (!Array.isArray(list))
    throw new ListError("rows", "expected an array of {number, timeZone?, variables?}");
  if (list.length > limits.maxRows)
    throw new ListError("rows", `more than ${limits.maxRows} rows (campaigns.maxRows)`);
  const check = new RowChecker(via, limits.maxRows, existing);
  for (const [i, item] of list.entries()) {
    const read = jsonRow(item);
    if ("field" in read) check.problems.push({ line: i + 1, ...read });
    else check.take(i + 1, read.number, read.zone, read.vars);
  }
  return { rows: check.rows, problems: check.problems };
}

/** One JSON row's fields, or its first problem. */
function jsonRow(
  item: unknown,
): { number: unknown; zone: unknown; vars: Record<string, string> } | FieldProblem {
  if (typeof item !== "object" || item === null || Array.isArray(item))
    return { field: "row", message: 'expected an object such as {"number": "+15550100"}' };
  const row = item as Record<string, unknown>;
  const unknown = Object.keys(row).find((k) => !["number", "timeZone", "variables"].includes(k));
  if (unknown) return { field: unknown, message: "unknown field (expected number, timeZone, variables)" };
  const vars: Record<string, string> = {};
  if (row.variables !== undefined) {
    if (typeof row.variables !== "object" || row.variables === null || Array.isArray(row.variables))
      return { field: "variables", message: "expected an object of names to strings" };
    for (const [k, v] of Object.entries(row.variables)) {
      if (!validVarName(k))
        return { field: `variables.${k}`, message: "expected a name of letters, digits, _ . -" };
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
        return { field: `variables.${k}`, message: "expected a string, number or boolean" };
      vars[k] = String(v);
    }
  }
  return {
    number: typeof row.number === "number" ? String(row.number) : row.number,
    zone: row.timeZone,
    vars,
  };
}
