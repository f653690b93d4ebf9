// Image operations named in an edit prompt ("make it grayscale and rotate 90 degrees, then blur"):
// found in the order the prompt names them, each applied with sharp as its own step on raw pixels
// (sharp orders the operations of one pipeline itself, so chaining would lose the prompt's order).
import sharp, { type Sharp } from "sharp";

export interface Raster {
  data: Buffer;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

export interface Operation {
  /** Operation name, e.g. `rotate`. */
  name: string;
  /** Name and parameters for the logs, e.g. `rotate 90°`. */
  label: string;
  apply(r: Raster): Promise<Raster>;
}

export const load = (r: Raster) =>
  sharp(r.data, { raw: { width: r.width, height: r.height, channels: r.channels } });

/** Runs a step; a result in one grey channel (+ alpha) is widened to RGB (+ alpha) for the next. */
export async function done(s: Sharp): Promise<Raster> {
  const { data, info } = await s.raw().toBuffer({ resolveWithObject: true });
  const r: Raster = { data, width: info.width, height: info.height, channels: info.channels };
  return r.channels <= 2 ? greyToRgb(r) : r;
}

function greyToRgb(r: Raster): Raster {
  const alpha = r.channels === 2;
  const out = Buffer.alloc(r.width * r.height * (alpha ? 4 : 3));
  for (let i = 0, o = 0; i < r.data.length; i += r.channels) {
    out[o++] = r.data[i]!;
    out[o++] = r.data[i]!;
    out[o++] = r.data[i]!;
    if (alpha) out[o++] = r.data[i + 1]!;
  }
  return { data: out, width: r.width, height: r.height, channels: alpha ? 4 : 3 };
}

/** The colour channels of a raster get `a * v + b`; alpha is kept. */
function levels(r: Raster, a: number, b: number) {
  const colour = r.channels === 2 || r.channels === 4 ? r.channels - 1 : r.channels;
  const as = Array.from({ length: r.channels }, (_, i) => (i < colour ? a : 1));
  const bs = Array.from({ length: r.channels }, (_, i) => (i < colour ? b : 0));
  return load(r).linear(as, bs);
}

const SEPIA: [[number, number, number], [number, number, number], [number, number, number]] = [
  [0.393, 0.769, 0.189],
  [0.349, 0.686, 0.168],
  [0.272, 0.534, 0.131],
];

interface Rule {
  name: string;
  pattern: RegExp;
  make(m: RegExpExecArray): Omit<Operation, "name">;
}

const num = (s: string | undefined, dflt: number, lo: number, hi: number) => {
  const v = s === undefined ? dflt : Number(s);
  return Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : dflt;
};

// Longer phrasings come before the words they contain ("flip horizontally" before "flip").
const RULES: readonly Rule[] = [
  {
    name: "grayscale",
    pattern: /\b(?:gr[ae]y\s?scale|black\s+and\s+white|monochrome)\b/g,
    make: () => ({ label: "grayscale", apply: (r) => done(load(r).greyscale()) }),
  },
  {
    name: "invert",
    pattern: /\b(?:invert(?:ed)?|negative)\b/g,
    make: () => ({ label: "invert", apply: (r) => done(load(r).negate({ alpha: false })) }),
  },
  {
    name: "blur",
    pattern: /\bblur(?:red|ry)?(?:\s+(?:by\s+)?(\d+(?:\.\d+)?))?/g,
    make: (m) => {
      const sigma = num(m[1], 4, 0.3, 100);
      return { label: `blur σ=${sigma}`, apply: (r) => done(load(r).blur(sigma)) };
    },
  },
  {
    name: "sharpen",
    pattern: /\bsharpen(?:ed)?\b/g,
    make: () => ({ label: "sharpen", apply: (r) => done(load(r).sharpen({ sigma: 1.5 })) }),
  },
  {
    name: "rotate",
    pattern: /\brotat(?:e|ed|ion)(?:\s+(?:it\s+)?(?:by\s+)?(-?\d+(?:\.\d+)?)\s*(?:°|deg(?:rees?)?)?)?/g,
    make: (m) => {
      const angle = num(m[1], 90, -360, 360);
      return {
        label: `rotate ${angle}°`,
        apply: (r) => done(load(r).rotate(angle, { background: { r: 0, g: 0, b: 0, alpha: 0 } })),
      };
    },
  },
  {
    name: "flop",
    pattern: /\b(?:flip(?:ped)?\s+horizontally|mirror(?:ed)?|flop)\b/g,
    make: () => ({ label: "flop (mirror left-right)", apply: (r) => done(load(r).flop()) }),
  },
  {
    name: "flip",
    pattern: /\b(?:flip(?:ped)?(?:\s+vertically)?|upside\s+down)\b/g,
    make: () => ({ label: "flip (upside down)", apply: (r) => done(load(r).flip()) }),
  },
  {
    name: "brighten",
    pattern: /\b(?:brighten(?:ed)?|brighter|lighten|lighter)\b/g,
    make: () => ({ label: "brighten ×1.3", apply: (r) => done(levels(r, 1.3, 0)) }),
  },
  {
    name: "darken",
    pattern: /\b(?:darken(?:ed)?|darker)\b/g,
    make: () => ({ label: "darken ×0.7", apply: (r) => done(levels(r, 0.7, 0)) }),
  },
  {
    name: "contrast",
    pattern: /\b(?:more|increase|boost|higher)\s+contrast\b|\bcontrast(?:y)?\b/g,
    make: () => ({ label: "contrast ×1.4", apply: (r) => done(levels(r, 1.4, -0.4 * 128)) }),
  },
  {
    name: "desaturate",
    pattern: /\b(?:desaturate(?:d)?|muted|washed\s+out)\b/g,
    make: () => ({
      label: "saturation ×0.4",
      apply: (r) => done(load(r).modulate({ saturation: 0.4 })),
    }),
  },
  {
    name: "saturate",
    pattern: /\b(?:saturate(?:d)?|more\s+colou?rful|vivid)\b/g,
    make: () => ({
      label: "saturation ×1.6",
      apply: (r) => done(load(r).modulate({ saturation: 1.6 })),
    }),
  },
  {
    name: "sepia",
    pattern: /\bsepia\b/g,
    make: () => ({ label: "sepia", apply: (r) => done(load(r).removeAlpha().recomb(SEPIA)) }),
  },
  {
    name: "pixelate",
    pattern: /\bpixel(?:ate(?:d)?|ized?|ised?)\b/g,
    make: () => ({
      label: "pixelate 16 px",
      apply: async (r) => {
        const small = await done(
          load(r).resize(Math.max(1, Math.round(r.width / 16)), Math.max(1, Math.round(r.height / 16))),
        );
        return done(load(small).resize(r.width, r.height, { kernel: "nearest" }));
      },
    }),
  },
];

/** Operations named in `prompt`, in the order it names them, minus those named in `exclude`. */
export function operationsIn(prompt: string, exclude = ""): Operation[] {
  const found = (text: string) => {
    const hits: Array<{ at: number; end: number; rule: Rule; m: RegExpExecArray }> = [];
    for (const rule of RULES) {
      for (const m of text.toLowerCase().matchAll(rule.pattern)) {
        const at = m.index;
        const end = at + m[0].length;
        // A phrase already claimed by an earlier (longer) rule is not matched again.
        if (!hits.some((h) => at < h.end && end > h.at))
          hits.push({ at, end, rule, m: m as RegExpExecArray });
      }
    }
    return hits.sort((a, b) => a.at - b.at);
  };
  const excluded = new Set(found(exclude).map((h) => h.rule.name));
  return found(prompt)
    .filter((h) => !excluded.has(h.rule.name))
    .map((h) => ({ name: h.rule.name, ...h.rule.make(h.m) }));
}
