// The names an agent's texts may use in `{{…}}` (rendered per call by src/agents/templates.ts),
// checked when the configuration is read: a name no call can ever fill is a config error.

export const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const NAME = /^(caller|called|transport|now|(param|var)\.[A-Za-z0-9_.-]+)$/;

export const TEMPLATE_NAMES = "caller, called, transport, now, param.NAME or var.NAME";

/** The names in `text` that no call can ever fill (typos such as `{{caler}}` or `{{params.x}}`). */
export function unknownTemplateNames(text: string): string[] {
  const bad: string[] = [];
  for (const m of text.matchAll(TEMPLATE)) if (!NAME.test(m[1]!)) bad.push(m[1]!);
  return bad;
}

/** True when `zone` is a time zone this runtime knows (an IANA name such as Europe/Paris, or UTC). */
export function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
