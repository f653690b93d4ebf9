// markdown_filter: speaks the text of Markdown, not its syntax. Works on whole documents and on
// fragments (a streamed sentence may hold half of a **bold** pair: stray markers are dropped too).

export function stripMarkdown(text: string): string {
  let t = text;
  t = t.replace(/^\s*(```|~~~).*$/gm, ""); // code fences (the code itself stays)
  t = t.replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1"); // images → alt text
  t = t.replace(/\[([^\]]+)\]\([^)]*\)/g, "$1"); // links → link text
  t = t.replace(/\[([^\]]+)\]\[[^\]]*\]/g, "$1"); // reference links
  t = t.replace(/^\s*\[[^\]]+\]:\s*\S+.*$/gm, ""); // link definitions
  t = t.replace(/<\/?[A-Za-z][^>]*>/g, ""); // HTML tags
  t = t.replace(/^\s{0,3}#{1,6}\s+/gm, ""); // headings
  t = t.replace(/^\s{0,3}>\s?/gm, ""); // block quotes
  t = t.replace(/^\s*([-*_])(\s*\1){2,}\s*$/gm, ""); // horizontal rules
  t = t.replace(/^\s*[-*+]\s+(\[[ xX]\]\s+)?/gm, ""); // bullets and task boxes
  t = t.replace(/^\s*\d+[.)]\s+/gm, ""); // numbered list markers
  t = t.replace(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/gm, ""); // table rule rows
  t = t.replace(/\s*\|\s*/g, ", ").replace(/^, |, $/gm, ""); // table cells
  t = t.replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, "$2"); // strong
  t = t.replace(/(\*|_)(?=\S)([\s\S]*?\S)\1(?![\p{L}\d])/gu, "$2"); // emphasis
  t = t.replace(/~~(?=\S)([\s\S]*?\S)~~/g, "$1"); // strike-through
  t = t.replace(/`+([^`]*)`+/g, "$1"); // inline code
  t = t.replace(/(^|\s)[*_~`#]+(?=\s|$)/g, "$1").replace(/[*`~]+/g, ""); // stray markers
  t = t.replace(/\n{2,}/g, "\n").replace(/[ \t]{2,}/g, " ");
  return t.trim();
}
