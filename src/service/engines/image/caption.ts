// Text rendering of text_mode: the words to show (the prompt's quoted text if it has any, else the
// whole prompt) set in lines on a light plate across the lower part of the picture, as an SVG
// overlay that sharp composites (librsvg with the system's DejaVu fonts; no network fonts).

/** Text inside "…", “…” or '…' in the prompt; else the prompt itself. */
export function captionText(prompt: string): string {
  const quoted = [...prompt.matchAll(/"([^"]+)"|“([^”]+)”|'([^']+)'/g)].map((m) =>
    (m[1] ?? m[2] ?? m[3])!.trim(),
  );
  const text = quoted.filter(Boolean).join(" ") || prompt;
  return text.replace(/\s+/g, " ").trim();
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Greedy word wrap at `maxChars` per line; longer words are cut. */
function wrap(text: string, maxChars: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (let word of text.split(" ")) {
    while (word.length > maxChars) {
      if (line) lines.push(line);
      lines.push(word.slice(0, maxChars));
      word = word.slice(maxChars);
      line = "";
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= maxChars) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** Average advance of DejaVu Sans Bold, in ems (a little generous, so lines stay on the plate). */
const EM_PER_CHAR = 0.68;

/** A full-size transparent SVG with the text on a plate; undefined when there is no text. */
export function captionSvg(text: string, width: number, height: number): string | undefined {
  if (!text) return undefined;
  let font = Math.max(12, Math.round(Math.min(width, height) / 14));
  let lines: string[];
  // Shrink until the lines fit in 70% of the height.
  for (;;) {
    lines = wrap(text, Math.max(4, Math.floor((width * 0.9) / (font * EM_PER_CHAR))));
    if (lines.length * font * 1.3 <= height * 0.7 || font <= 10) break;
    font = Math.max(10, Math.floor(font * 0.85));
  }
  const lineH = Math.round(font * 1.3);
  const plateH = lines.length * lineH + font;
  const top = Math.max(0, height - plateH - Math.round(height * 0.05));
  const rows = lines.map(
    (l, i) =>
      `<text x="${width / 2}" y="${top + Math.round(font * 0.5) + (i + 1) * lineH - Math.round(font * 0.3)}" text-anchor="middle">${escapeXml(l)}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`,
    `<rect x="${Math.round(width * 0.03)}" y="${top}" width="${Math.round(width * 0.94)}" height="${plateH}" rx="${Math.round(font / 3)}" fill="#fafafa" fill-opacity="0.92"/>`,
    `<g font-family="DejaVu Sans, sans-serif" font-weight="bold" font-size="${font}" fill="#111">`,
    ...rows,
    "</g></svg>",
  ].join("");
}
