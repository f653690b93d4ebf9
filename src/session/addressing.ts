// Whether a turn in a group conversation speaks to the agent: its name said as a word (or
// words), anywhere in the turn, whatever the case and punctuation around it.

const normalize = (s: string) =>
  s
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

export function addressesAgent(text: string, agentName: string): boolean {
  const name = normalize(agentName);
  if (!name) return false;
  return ` ${normalize(text)} `.includes(` ${name} `);
}
