// The agents each agent may hand a call to (`handoffs`) must exist: a typo would leave the model a
// handoff tool that leads nowhere, found only on a live call. Checked on the tree as written, as
// the routes' agents are (config.ts), so the error names the key where the name was set.

type Tree = Record<string, unknown>;

const isTree = (v: unknown): v is Tree => typeof v === "object" && v !== null && !Array.isArray(v);

/** `handoffs` entries that name no configured agent, or the agent itself. */
export function handoffProblems(tree: Tree): Array<{ path: PropertyKey[]; message: string }> {
  const agents = isTree(tree.agents) ? tree.agents : {};
  const names = new Set(["default", ...Object.keys(agents)]);
  const blocks: Array<[PropertyKey[], string, unknown]> = [
    [["agent"], "default", tree.agent],
    ...Object.entries(agents).map(([name, a]): [PropertyKey[], string, unknown] => [
      ["agents", name],
      name,
      a,
    ]),
  ];
  const problems: Array<{ path: PropertyKey[]; message: string }> = [];
  for (const [path, self, block] of blocks) {
    if (!isTree(block) || !Array.isArray(block.handoffs)) continue;
    block.handoffs.forEach((to: unknown, i) => {
      if (typeof to !== "string") return; // the schema names that one
      const at = [...path, "handoffs", i];
      if (to === self) problems.push({ path: at, message: `agent "${self}" cannot hand a call to itself` });
      else if (!names.has(to))
        problems.push({ path: at, message: `no agent named "${to}"; agents: ${[...names].join(", ")}` });
    });
  }
  return problems;
}
