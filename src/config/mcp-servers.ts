// An agent's `mcpServers`: tool servers speaking the Model Context Protocol, over stdio (a program
// the bridge starts once and shares between calls) or streamable HTTP (a URL). The entries read as
// other MCP clients write them (Claude's, Cursor's `mcpServers`), so one can be pasted in. What
// connects to them and offers their tools to the model is src/agents/mcp/.
import { z } from "zod";
import { TEMPLATE, TEMPLATE_NAMES, unknownTemplateNames } from "./templates.ts";
import { httpUrl } from "./values.ts";

/** `${NAME}`: a variable of the bridge's own environment, read when the server is started. */
export const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** How long a tool call may take by default before the model is told it did not answer, ms. */
export const MCP_DEFAULT_TIMEOUT_MS = 5000;

const SHARED =
  "per-call variables ({{…}}) cannot fill it: the server is started once for the bridge, before any call";

/** A text the server is started with: `${NAME}` allowed, per-call `{{…}}` refused. */
const startText = (min = 0) =>
  z
    .string()
    .min(min)
    .superRefine((v, ctx) => {
      if (v.match(TEMPLATE)) ctx.addIssue({ code: "custom", message: SHARED });
    });

/** A header's value: `${NAME}` (filled at start) and per-call variables (filled per tool call). */
const headerValue = z.string().superRefine((v, ctx) => {
  for (const name of unknownTemplateNames(v))
    ctx.addIssue({ code: "custom", message: `unknown variable {{${name}}}: expected ${TEMPLATE_NAMES}` });
});

export const mcpServerSchema = z
  .object({
    type: z.enum(["stdio", "http"], { error: "expected stdio or http" }).optional().meta({
      description:
        "`stdio` (a program, `command`) or `http` (streamable HTTP, `url`); default: the one its keys say.",
    }),
    command: startText(1).optional().meta({
      description:
        "The program that serves MCP over stdio (e.g. `npx`): started once when the bridge starts, shared by every call, restarted if it exits.",
    }),
    args: z.array(startText()).optional().meta({ description: "The program's arguments." }),
    env: z.record(z.string(), startText()).optional().meta({
      secret: true,
      description:
        // biome-ignore lint/suspicious/noTemplateCurlyInString: ${NAME} is the setting's own syntax, not a template
        "Environment variables of the program (beside PATH, HOME, USER, SHELL, TERM, LOGNAME); `${NAME}` in a value takes the bridge's variable NAME.",
    }),
    cwd: startText(1).optional().meta({
      description: "The program's working directory (default: the bridge's).",
    }),
    url: httpUrl.pipe(startText()).optional().meta({
      description: "The server's streamable HTTP endpoint (e.g. https://mcp.example.com/mcp).",
    }),
    headers: z.record(z.string(), headerValue).optional().meta({
      secret: true,
      description:
        // biome-ignore lint/suspicious/noTemplateCurlyInString: ${NAME} is the setting's own syntax, not a template
        "HTTP headers (an Authorization header, say); `${NAME}` takes the bridge's variable NAME, per-call variables ({{var.NAME}}, {{caller}}…) are filled on each tool call.",
    }),
    tools: z.array(z.string().min(1)).min(1).optional().meta({
      description:
        "Only these of the server's tools are offered to the model (default: all); a way out of a name clash.",
    }),
    timeoutMs: z.coerce
      .number({ error: "expected a whole number from 100 to 60000" })
      .int({ error: "expected a whole number from 100 to 60000" })
      .min(100, { error: "expected a whole number from 100 to 60000" })
      .max(60_000, { error: "expected a whole number from 100 to 60000" })
      .default(MCP_DEFAULT_TIMEOUT_MS)
      .meta({
        description:
          "Longest wait for a tool call's answer, ms; then the model is told the tool did not answer and the turn goes on.",
      }),
  })
  .superRefine((v, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (v.command === undefined && v.url === undefined)
      issue("command", "expected `command` (a stdio server) or `url` (a streamable HTTP server)");
    if (v.command !== undefined && v.url !== undefined)
      issue("url", "a server has `command` (stdio) or `url` (HTTP), not both");
    const http = v.url !== undefined;
    if (v.type === "stdio" && v.command === undefined) issue("command", "required by type stdio");
    if (v.type === "http" && !http) issue("url", "required by type http");
    const stdioOnly = "only a stdio server (`command`) takes it";
    if (http && v.args) issue("args", stdioOnly);
    if (http && v.env) issue("env", stdioOnly);
    if (http && v.cwd !== undefined) issue("cwd", stdioOnly);
    if (v.command !== undefined && v.headers) issue("headers", "only an HTTP server (`url`) takes headers");
  });

export type McpServerConfig = z.output<typeof mcpServerSchema>;
/** An entry of `mcpServers` as written (the config file, defineAgent). */
export type McpServerInput = z.input<typeof mcpServerSchema>;

/** Server names: how the log, the errors and `voice-bridge config` call them. */
export const mcpServersSchema = z
  .record(
    z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: "a name of letters, digits, _, . and - (at most 64)" }),
    mcpServerSchema,
  )
  .default({})
  .meta({
    description:
      'MCP tool servers by name (stdio `command` or HTTP `url`): their tools are offered to the model beside the agent\'s other tools (docs/agents.md, "MCP servers").',
  });
