// One MCP server as the bridge holds it: one client (the SDK's), connected once and shared by every
// call's tool calls, its tools listed at connection (and again when the server says they changed).
// When it goes away (a stdio server exits, an HTTP server forgets the session or stops answering),
// it is connected again with a backoff and a log line; a tool call meanwhile fails at once rather
// than holding the caller's turn. Per-call headers (filled from the call's variables) ride on the
// tool call's own HTTP request, through the transport's fetch.
import { AsyncLocalStorage } from "node:async_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../core/log.ts";
import { settleWithin } from "../../core/settle-within.ts";

export type { McpTool };

/** Where a server is, its `${NAME}`s already filled from the bridge's environment. */
export type McpEndpoint =
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: "http"; url: string; headers: Record<string, string> };

/** Starting the program or the session and listing the tools may take this long, ms. */
export const MCP_CONNECT_TIMEOUT_MS = 30_000;

/** The wait before the next attempt after `failures` failed ones: 0, then 0.5 s doubling to 30 s. */
export function reconnectDelayMs(failures: number): number {
  return failures === 0 ? 0 : Math.min(30_000, 500 * 2 ** (failures - 1));
}

/** A server that exits sooner than this after connecting counts as failing (the backoff grows). */
const STEADY_MS = 10_000;

/** The headers of the tool call under way in this async context (HTTP servers). */
const callHeaders = new AsyncLocalStorage<Readonly<Record<string, string>>>();

export interface CallOptions {
  /** The reply's signal (barge-in, the call's end) joined with the tool's deadline. */
  signal: AbortSignal;
  timeoutMs: number;
  /** Headers for this call's request alone (an HTTP server's per-call variables). */
  headers?: Readonly<Record<string, string>>;
}

type State = "down" | "connecting" | "up" | "closed";

export class McpConnection {
  readonly #label: string;
  readonly #endpoint: McpEndpoint;
  readonly #log: Logger;
  readonly #onTools: (tools: readonly McpTool[]) => void;
  readonly #connectTimeoutMs: number;
  #state: State = "down";
  #client: Client | undefined;
  #transport: Transport | undefined;
  /** The client being connected, closed if the bridge shuts down meanwhile. */
  #opening: Client | undefined;
  #attempt: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #failures = 0;
  #upSince = 0;
  #lastError = "not connected yet";
  /** A stdio server's last lines on stderr, told when it exits. */
  #stderr: string[] = [];
  /** The server's tools as last listed. */
  tools: readonly McpTool[] = [];

  constructor(opts: {
    label: string;
    endpoint: McpEndpoint;
    log: Logger;
    onTools: (tools: readonly McpTool[]) => void;
    connectTimeoutMs?: number;
  }) {
    this.#label = opts.label;
    this.#endpoint = opts.endpoint;
    this.#log = opts.log;
    this.#onTools = opts.onTools;
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? MCP_CONNECT_TIMEOUT_MS;
  }

  get connected(): boolean {
    return this.#state === "up";
  }

  /** Why the server is not connected (the last failure). */
  get lastError(): string {
    return this.#lastError;
  }

  /** One attempt to connect and list the tools; rejects with why it failed (nothing retried). */
  connect(): Promise<void> {
    if (this.#attempt) return this.#attempt;
    this.#state = "connecting";
    const attempt = this.#open().then(
      (client) => {
        if (this.#state === "closed") {
          void client.close().catch(() => {});
          throw new Error("closed while connecting");
        }
        this.#client = client;
        this.#state = "up";
        this.#upSince = Date.now();
      },
      (err: unknown) => {
        if (this.#state !== "closed") this.#state = "down";
        this.#lastError = messageOf(err);
        throw err;
      },
    );
    this.#attempt = attempt.finally(() => {
      this.#attempt = undefined;
    });
    return this.#attempt;
  }

  /** Keeps trying to connect in the background, with backoff (a server that was not there at start). */
  reconnectLater(): void {
    this.#failures++;
    this.#schedule();
  }

  /** Calls a tool; rejects when the server is away, the call fails, or `signal` fires. */
  async call(name: string, args: Record<string, unknown>, opts: CallOptions): Promise<CallToolResult> {
    const client = await this.#ready(opts.signal);
    try {
      return await this.#callOn(client, name, args, opts);
    } catch (err) {
      if (opts.signal.aborted || (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed))
        throw err;
      // An HTTP server that forgot the session (restarted) never ran the call: a new session, and again.
      const forgotten = err instanceof StreamableHTTPError && err.code === 404;
      const reason = forgotten
        ? "forgot the session (HTTP 404)"
        : err instanceof McpError
          ? "closed the connection"
          : `could not be reached (${messageOf(err)})`;
      this.#lost(client, reason, forgotten);
      if (!forgotten) throw new Error(`the server ${reason}`, { cause: err });
      return this.#callOn(await this.#ready(opts.signal), name, args, opts);
    }
  }

  /** Closes the connection (ends a stdio server, ends an HTTP session); nothing is retried after. */
  async close(): Promise<void> {
    this.#state = "closed";
    clearTimeout(this.#retry);
    const opening = this.#opening;
    if (opening) await opening.close().catch(() => {});
    const client = this.#client;
    const transport = this.#transport;
    this.#client = undefined;
    if (!client) return;
    client.onclose = undefined;
    if (transport instanceof StreamableHTTPClientTransport)
      await settleWithin(transport.terminateSession(), 1000);
    await client.close().catch(() => {});
  }

  async #open(): Promise<Client> {
    const client = new Client(
      { name: "voice-bridge", version: "1" },
      {
        capabilities: {},
        listChanged: {
          tools: {
            onChanged: (err, tools) => {
              if (err || !tools || this.#client !== client) return;
              this.#log.info({ tools: tools.map((t) => t.name) }, `${this.#label}: its tools changed`);
              this.#setTools(tools);
            },
          },
        },
      },
    );
    const transport = this.#makeTransport();
    client.onclose = () => {
      if (this.#client === client) this.#lost(client, "closed the connection (exited)");
    };
    // What the SDK copes with itself (an HTTP server's event stream dropped and resumed).
    client.onerror = (err) => this.#log.debug({ err: messageOf(err) }, `${this.#label}: ${err.name}`);
    this.#opening = client;
    try {
      await client.connect(transport, { timeout: this.#connectTimeoutMs });
      const tools = client.getServerCapabilities()?.tools
        ? await listTools(client, this.#connectTimeoutMs)
        : [];
      if (this.#state === "closed") throw new Error("closed while connecting");
      this.#transport = transport;
      this.#setTools(tools);
      return client;
    } catch (err) {
      client.onclose = undefined;
      await client.close().catch(() => {});
      throw err;
    } finally {
      this.#opening = undefined;
    }
  }

  #setTools(tools: readonly McpTool[]): void {
    this.tools = tools;
    this.#onTools(tools);
  }

  #makeTransport(): Transport {
    const e = this.#endpoint;
    if (e.kind === "http")
      return new StreamableHTTPClientTransport(new URL(e.url), {
        requestInit: { headers: e.headers },
        fetch: (url, init) => {
          const extra = callHeaders.getStore();
          if (!extra) return fetch(url, init);
          const headers = new Headers(init?.headers);
          for (const [k, v] of Object.entries(extra)) headers.set(k, v);
          return fetch(url, { ...init, headers });
        },
      });
    const transport = new StdioClientTransport({
      command: e.command,
      args: e.args,
      env: e.env,
      stderr: "pipe",
      ...(e.cwd ? { cwd: e.cwd } : {}),
    });
    this.#stderr = [];
    transport.stderr?.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (!line.trim()) continue;
        this.#log.debug({ stderr: line }, `${this.#label} says`);
        this.#stderr.push(line.slice(0, 300));
        if (this.#stderr.length > 5) this.#stderr.shift();
      }
    });
    return transport;
  }

  async #ready(signal: AbortSignal): Promise<Client> {
    if (this.#state === "connecting" && this.#attempt)
      await untilAborted(
        this.#attempt.catch(() => {}),
        signal,
      );
    if (this.#state === "closed") throw new Error("the bridge is shutting down");
    if (this.#state !== "up" || !this.#client)
      throw new Error(`the server is not connected (${this.#lastError}); the bridge is reconnecting`);
    return this.#client;
  }

  #callOn(client: Client, name: string, args: Record<string, unknown>, o: CallOptions) {
    const call = () =>
      client.callTool({ name, arguments: args }, undefined, {
        signal: o.signal,
        timeout: o.timeoutMs,
      }) as Promise<CallToolResult>;
    // Outside a call's context, the connection's own requests carry the fixed headers alone.
    return o.headers && Object.keys(o.headers).length ? callHeaders.run(o.headers, call) : call();
  }

  /**
   * The connection `client` broke: dropped, and connected again, at once unless it keeps failing
   * (`now`: at once whatever, a call waits for it).
   */
  #lost(client: Client, reason: string, now = false): void {
    if (this.#client !== client || this.#state === "closed") return;
    this.#client = undefined;
    this.#transport = undefined;
    this.#state = "down";
    this.#lastError = `it ${reason}`;
    client.onclose = undefined;
    void client.close().catch(() => {});
    if (!now) this.#failures = Date.now() - this.#upSince < STEADY_MS ? this.#failures + 1 : 0;
    const delay = now ? 0 : reconnectDelayMs(this.#failures);
    const stderr = this.#endpoint.kind === "stdio" && this.#stderr.length ? this.#stderr : undefined;
    this.#log.warn(
      { retryInMs: delay, ...(stderr ? { stderr } : {}) },
      `${this.#label} ${reason}: reconnecting`,
    );
    this.#schedule(delay);
  }

  #schedule(delay = reconnectDelayMs(this.#failures)): void {
    clearTimeout(this.#retry);
    const again = () => {
      this.#retry = undefined;
      if (this.#state === "closed") return;
      this.connect().then(
        () => this.#log.info({ tools: this.tools.length }, `${this.#label} reconnected`),
        (err: unknown) => {
          if (this.#state === "closed") return;
          this.#failures++;
          this.#log.warn(
            { err: messageOf(err), retryInMs: reconnectDelayMs(this.#failures) },
            `${this.#label} could not reconnect`,
          );
          this.#schedule();
        },
      );
    };
    if (delay === 0) again();
    else this.#retry = setTimeout(again, delay).unref();
  }
}

async function listTools(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** `work`, or the signal's reason once it fires. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // fetch says "fetch failed"; why (ECONNREFUSED, a TLS error) is in its cause.
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause && !err.message.includes(cause) ? `${err.message} (${cause})` : err.message;
}
