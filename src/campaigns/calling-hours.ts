// Calling hours: the days and the time of day a campaign may call, read on the callee's clock
// (their row's zone, else the campaign's) or the campaign's. Local times come from the IANA
// database (Intl), so daylight-saving changes move the window with the callee's clock.
import { z } from "zod";

export const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Day = (typeof DAYS)[number];

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$|^24:00$/;
const minutesOf = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3, 5));

/** `mon-fri`, `sat,sun`, or a list of days: the days it names (in week order). */
function parseDays(v: string | readonly string[]): Day[] | string {
  const words = (typeof v === "string" ? v.split(",") : v).map((w) => w.trim().toLowerCase()).filter(Boolean);
  const days = new Set<Day>();
  for (const w of words) {
    const [a, b] = w.split("-");
    const from = DAYS.indexOf(a as Day);
    const to = b === undefined ? from : DAYS.indexOf(b as Day);
    if (from < 0 || to < 0 || (b !== undefined && to < from))
      return `"${w}" is not a day or a range of days (mon, tue, … sun; mon-fri)`;
    for (let i = from; i <= to; i++) days.add(DAYS[i]!);
  }
  if (days.size === 0) return "expected at least one day";
  return DAYS.filter((d) => days.has(d));
}

export const callingHoursSchema = z
  .object({
    days: z
      .union([z.string(), z.array(z.string())])
      .default("mon-fri")
      .transform((v, ctx): Day[] => {
        const days = parseDays(v);
        if (typeof days !== "string") return days;
        ctx.addIssue({ code: "custom", message: days });
        return z.NEVER;
      }),
    from: z.string().regex(HHMM, { error: "expected a time of day HH:MM such as 09:00" }).default("09:00"),
    to: z
      .string()
      .regex(HHMM, { error: "expected a time of day HH:MM such as 18:00 (24:00: midnight)" })
      .default("18:00"),
    /** Whose clock: the callee's (their row's zone, else the campaign's) or the campaign's. */
    in: z.enum(["callee", "campaign"], { error: "expected callee or campaign" }).default("callee"),
  })
  .strict()
  .refine((h) => minutesOf(h.from) < minutesOf(h.to), { path: ["to"], error: "expected a time after from" });

export type CallingHours = z.infer<typeof callingHoursSchema>;

const formats = new Map<string, Intl.DateTimeFormat>();

function format(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formats.set(zone, f);
  }
  return f;
}

/** An IANA zone name the runtime knows (Europe/Paris, America/New_York, UTC). */
export function validZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(zone)) return false;
  try {
    format(zone);
    return true;
  } catch {
    return false;
  }
}

/** The last answer per zone: the scheduler asks about the same minute many times. */
const lastLocal = new Map<string, { at: number; local: { day: Day; minute: number } }>();

/** The day of the week and the minute of the day at `epochMs` on `zone`'s clock. */
export function localTime(zone: string, epochMs: number): { day: Day; minute: number } {
  const at = Math.floor(epochMs / 60_000);
  const last = lastLocal.get(zone);
  if (last?.at === at) return last.local;
  const local = readLocalTime(zone, epochMs);
  if (lastLocal.size > 1000) lastLocal.clear();
  lastLocal.set(zone, { at, local });
  return local;
}

function readLocalTime(zone: string, epochMs: number): { day: Day; minute: number } {
  let weekday = "";
  let hour = 0;
  let minute = 0;
  for (const p of format(zone).formatToParts(epochMs)) {
    if (p.type === "weekday") weekday = p.value.toLowerCase();
    else if (p.type === "hour") hour = Number(p.value);
    else if (p.type === "minute") minute = Number(p.value);
  }
  return { day: weekday.slice(0, 3) as Day, minute: hour * 60 + minute };
}

/** May a call start at `epochMs` for a callee on `zone`'s clock? */
export function isOpen(hours: CallingHours, zone: string, epochMs: number): boolean {
  const { day, minute } = localTime(zone, epochMs);
  return hours.days.includes(day) && minute >= minutesOf(hours.from) && minute < minutesOf(hours.to);
}

/**
 * When the window next opens on `zone`'s clock (now, if it is open), to the minute; undefined
 * when it never does within eight days (no such day). Steps by quarter hours, then by minutes.
 */
export function nextOpening(hours: CallingHours, zone: string, epochMs: number): number | undefined {
  if (isOpen(hours, zone, epochMs)) return epochMs;
  const QUARTER = 15 * 60_000;
  const start = Math.ceil(epochMs / 60_000) * 60_000;
  for (let t = start; t < epochMs + 8 * 86_400_000; t += QUARTER) {
    if (!isOpen(hours, zone, t)) continue;
    let at = t;
    while (at - 60_000 > epochMs && isOpen(hours, zone, at - 60_000)) at -= 60_000;
    return at;
  }
  return undefined;
}

/** The zone a row's hours are read in. */
export function zoneOf(hours: CallingHours, campaignZone: string, rowZone: string | undefined): string {
  return hours.in === "callee" && rowZone ? rowZone : campaignZone;
}
