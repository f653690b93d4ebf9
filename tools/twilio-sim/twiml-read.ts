// Reads what Twilio needs from a voice webhook's TwiML answer: the <Connect><Stream> url and
// its <Parameter>s (which come back in the start message's customParameters); and from the TwiML
// a live call is given through the REST API, where it goes next (<Dial> a number, a SIP URI or a
// <Conference>, <Hangup/>). A small
// scanner for the few elements involved, not a general XML parser.

export interface StreamInstruction {
  url: string;
  parameters: Record<string, string>;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function unescapeXml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === "#")
      return String.fromCodePoint(
        e[1] === "x" || e[1] === "X" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
      );
    return ENTITIES[e] ?? whole;
  });
}

/** Attribute name → value of one start tag's attribute text. */
function attributes(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
    out[m[1]!] = unescapeXml(m[3] ?? m[4] ?? "");
  }
  return out;
}

/** A start tag: name, attributes (quoted values may hold `>`), optional self-closing slash. */
const TAG = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g;

/** The first <Stream> inside <Connect>, or null when the TwiML has none. */
export function readStreamTwiml(xml: string): StreamInstruction | null {
  let inConnect = false;
  let stream: StreamInstruction | null = null;
  let inStream = false;
  for (const m of xml.matchAll(TAG)) {
    const [, closing, name, attrText, selfClosing] = m;
    if (name === "Connect") inConnect = !closing && !selfClosing;
    else if (name === "Stream" && inConnect && !closing && !stream) {
      const attrs = attributes(attrText ?? "");
      if (!attrs.url) continue;
      stream = { url: attrs.url, parameters: {} };
      inStream = !selfClosing;
    } else if (name === "Stream" && closing) inStream = false;
    else if (name === "Parameter" && inStream && stream && !closing) {
      const attrs = attributes(attrText ?? "");
      if (attrs.name !== undefined) stream.parameters[attrs.name] = attrs.value ?? "";
    }
  }
  return stream;
}

/** A <Dial><Conference>: the room's name and the attributes that say when it starts and ends. */
export interface ConferenceInstruction {
  name: string;
  /** Default true: the conference starts when this call comes in. */
  startConferenceOnEnter: boolean;
  /** Default false: the conference ends when this call leaves. */
  endConferenceOnExit: boolean;
}

/** What new TwiML for a live call does: transfers it (<Dial> a number, or <Dial><Sip>), joins a conference, or hangs up. */
export interface CallInstruction {
  /** The number or SIP URI dialled, when the TwiML has a <Dial> of one. */
  dial?: string;
  /** The conference joined, when the TwiML has a <Dial><Conference>. */
  conference?: ConferenceInstruction;
  hangUp: boolean;
}

export function readCallTwiml(xml: string): CallInstruction {
  const hangUp = /<Hangup\s*\/>/.test(xml);
  const dial = /<Dial\b[^>]*>([\s\S]*?)<\/Dial>/.exec(xml)?.[1];
  const room = dial === undefined ? null : /<Conference\b([^>]*)>([\s\S]*?)<\/Conference>/.exec(dial);
  if (room) {
    const attrs = attributes(room[1] ?? "");
    const conference = {
      name: unescapeXml(room[2]!.trim()),
      startConferenceOnEnter: attrs.startConferenceOnEnter !== "false",
      endConferenceOnExit: attrs.endConferenceOnExit === "true",
    };
    return { conference, hangUp };
  }
  const target = dial === undefined ? undefined : (/<Sip\b[^>]*>([\s\S]*?)<\/Sip>/.exec(dial)?.[1] ?? dial);
  return { ...(target !== undefined ? { dial: unescapeXml(target.trim()) } : {}), hangUp };
}
