// Per-call variables in an agent's texts: `{{caller}}`, `{{called}}`, `{{transport}}`,
// `{{param.NAME}}` (the call's parameters), `{{var.NAME}}` (the call-start webhook's variables) and
// `{{now}}` (the start of the call in the agent's time zone). A name that can never exist is a
// config error; one that is merely absent on this call renders empty and is reported once.

import { TEMPLATE } from "../config/templates.ts";

/** What one call fills the templates with. */
export interface CallVariables {
  caller?: string | undefined;
  called?: string | undefined;
  transport: string;
  params: Readonly<Record<string, string>>;
  vars: Readonly<Record<string, string>>;
  /** The start of the call, already written in the agent's time zone. */
  now: string;
}

export class TemplateRenderer {
  readonly #values: CallVariables;
  /** Names that were asked for and absent (each reported once per call). */
  readonly missing = new Set<string>();
  readonly #onMissing: (name: string) => void;

  constructor(values: CallVariables, onMissing: (name: string) => void) {
    this.#values = values;
    this.#onMissing = onMissing;
  }

  /** `text` with its templates filled; `encode` escapes each value (a URL's path or query). */
  render(text: string, encode?: (value: string) => string): string {
    return text.replace(TEMPLATE, (_all, name: string) => {
      const value = this.#lookup(name);
      if (value === undefined) {
        if (!this.missing.has(name)) {
          this.missing.add(name);
          this.#onMissing(name);
        }
        return "";
      }
      return encode ? encode(value) : value;
    });
  }

  #lookup(name: string): string | undefined {
    const v = this.#values;
    if (name === "caller") return v.caller;
    if (name === "called") return v.called;
    if (name === "transport") return v.transport;
    if (name === "now") return v.now;
    if (name.startsWith("param.")) return own(v.params, name.slice(6));
    if (name.startsWith("var.")) return own(v.vars, name.slice(4));
    return undefined;
  }
}

function own(record: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** The time written for `{{now}}`: e.g. "Tuesday, 24 November 2026 at 23:05 (Europe/Paris)". */
export function nowIn(timeZone: string, at: Date): string {
  let format = formats.get(timeZone);
  if (!format) {
    // Made once per zone: a formatter costs far more to build than to use, and calls start often.
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      weekday: "long",
      year: "numeric",
      month: "long",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formats.set(timeZone, format);
  }
  return `${format.format(at)} (${timeZone})`;
}

const formats = new Map<string, Intl.DateTimeFormat>();
