// Command-line entry point. Each subcommand loads and validates the configuration first,
// so a bad key stops the program with one clear message before anything starts.
import { Command, InvalidArgumentError, Option } from "commander";
import {
  type Config,
  ConfigError,
  configSchema,
  loadConfig,
  usesLocalService,
} from "../src/config/config.ts";
import { maskSecrets, secretKeyNames } from "../src/config/secrets.ts";
import { createLogger, logsArePretty } from "../src/core/log.ts";
import { programToken } from "./bridge-token.ts";
import { registerCampaignCommand } from "./cli-campaign.ts";
import { environmentHelp, environmentSummary, envName, flagHelp } from "./cli-help.ts";

function load(opts: { config?: string }, overrides: Record<string, unknown> = {}): Config {
  try {
    return loadConfig({ file: opts.config, overrides });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`voice-bridge: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

const program = new Command("voice-bridge")
  .description(
    "Realtime voice bridge: an AI agent on Twilio, SIP or Discord calls, backed by the service API.",
  )
  .showHelpAfterError()
  .addOption(new Option("-c, --config <file>", "config file (YAML or JSON)").env("VOICE_BRIDGE_CONFIG"))
  // The variables are listed in full for --help only: after an error the message should stay in sight.
  .addHelpText(
    "after",
    ({ error }): string => `
Configuration comes from defaults, then the config file, then environment
variables, then the flags of 'start'. In the environment an empty variable
counts as unset, true/false also read as yes/no, on/off and 1/0, and lists are
comma-separated; AGENT_* variables set the default agent.
Several agents, chosen per call: agent:, agents:, routes: and agentWebhook: in
the config file (docs/agents.md); SIGHUP or 'voice-bridge reload' reads them
again without dropping calls.
Run 'voice-bridge config' to see the resolved configuration; every setting:
docs/configuration.md.
${
  error
    ? "Run 'voice-bridge --help' for the environment variables."
    : `
Environment variables, by section of the config file (default); what each one
sets and means: 'voice-bridge config --help'.
${environmentSummary(program.configureOutput().getOutHelpWidth?.() ?? 80)}`
}`,
  );

program
  .command("start")
  .description(
    `run the bridge (the main job): the live console and browser calls at /, Twilio endpoints, SIP, the Discord bot when ${envName("discord.token")} is set, /metrics, /healthz, /readyz, /calls/:id; uses the embedded local service when no ${envName("service.baseUrl")} / ${envName("service.apiKey")} is set`,
  )
  .option("--host <host>", flagHelp("address to listen on", "server.host"))
  .option("--port <port>", flagHelp("port to listen on", "server.port"))
  .option(
    "--shards <n|auto>",
    flagHelp("run the Discord bot as N shard processes, or Discord's count", "discord.shards"),
  )
  .action(async (opts: { host?: string; port?: string; shards?: string }) => {
    const { runShards, shardOfThisProcess, shardOverrides, shardPort } = await import("./sharding.ts");
    const startOverrides = {
      server: { host: opts.host, port: opts.port },
      discord: { shards: opts.shards },
      // A shard serves Discord only: SIP and AudioSocket off in it.
      ...shardOverrides(),
    };
    let config = load(program.opts(), startOverrides);
    const log = createLogger(config.log);
    const shard = shardOfThisProcess();
    if (shard === undefined && config.discord.shards !== undefined) {
      // The manager: it forks one full bridge per shard (`start` again) and takes no calls itself.
      const run = await runShards(config, log);
      const stopShards = async () => {
        await run?.close();
        process.exit(0);
      };
      process.once("SIGTERM", () => void stopShards());
      process.once("SIGINT", () => void stopShards());
      return;
    }
    if (shard !== undefined)
      config = { ...config, server: { ...config.server, port: shardPort(config.server.port, shard) } };
    // Loaded here: the bridge pulls in the call path (VAD model, transports) other commands never need.
    const { runBridge } = await import("./library/create-bridge.ts");
    // For a person reading the terminal the ways in stand out as a box (a log line, so it comes in
    // order with the others); for log collectors they are fields of one line.
    const { bannerText } = await import("./banner.ts");
    const bridge = await runBridge(config, {
      log,
      // A reload reads the same file, environment and flags again (a shard keeps its own port).
      readConfig: () => {
        const next = loadConfig({ file: program.opts().config, overrides: startOverrides });
        return shard === undefined ? next : { ...next, server: config.server };
      },
      ...(logsArePretty(config.log)
        ? { announce: (e) => log.info(`ready: how to reach the agent\n${bannerText(e)}\n`) }
        : {}),
    });
    // SIGHUP: the configuration (agents, routes) and a renewed SIP TLS certificate read again.
    process.on("SIGHUP", () => {
      log.info("SIGHUP: reloading the configuration");
      bridge.reload();
    });
    const stop = async (signal: string) => {
      // A second signal skips the drain: the operator means it.
      process.once(signal, () => process.exit(1));
      log.info({ signal, calls: bridge.activeCalls }, "stopping: no new calls, letting live calls finish");
      await bridge.drain(signal === "SIGINT" ? 5_000 : 30_000);
      process.exit(0);
    };
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
  });

const SERVICE_PORT = "8080";

program
  .command("service")
  .description("run the local service (the spec's HTTP API on this machine, no account, no network)")
  .option("--host <host>", flagHelp("address to listen on", "local.host"))
  // Unlike the bridge's embedded service (any free port), the service alone has a fixed default.
  .option("--port <port>", flagHelp("port to listen on", "local.port", { default: SERVICE_PORT }))
  .option("--data-dir <dir>", flagHelp("files, metadata and the dev key", "local.dataDir"))
  .addOption(
    new Option(
      "--engines <profile>",
      flagHelp(
        "speech/chat engines; 'synthetic' is for benchmarks only: tones, a fixed transcript",
        "local.engineProfile",
      ),
    ).choices(["standard", "synthetic"]),
  )
  .action(async (opts: { host?: string; port?: string; dataDir?: string; engines?: string }) => {
    const port = opts.port ?? process.env[envName("local.port")] ?? SERVICE_PORT;
    const config = load(program.opts(), {
      local: { host: opts.host, port, dataDir: opts.dataDir, engineProfile: opts.engines },
    });
    const log = createLogger(config.log, process.stderr);
    const { startLocalService, serviceOptionsFromConfig } = await import("../src/service/index.ts");
    const service = await startLocalService({ ...serviceOptionsFromConfig(config.local), logger: log });
    process.stdout.write(`local service listening on ${service.url}\n`);
    process.stdout.write(
      `API keys accepted${service.devKey ? " (dev key kept in the data dir)" : ""}: ${service.apiKeys.join(", ")}\n`,
    );
    const stop = async (signal: string) => {
      log.info({ signal }, "local service stopping");
      await service.close();
      process.exit(0);
    };
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
  });

program
  .command("call")
  .description(
    "simulate a phone call to a running bridge, exactly as Twilio places one (signed webhook, media stream); prints the transcript and timings",
  )
  .option("--url <url>", "base URL of the bridge (default http://127.0.0.1:PORT)")
  .option("--wav <file>", "caller audio on a fixed timeline from the start of the call")
  .option("--say <file>", "a caller turn, said once the agent has replied (repeatable)", collect, [])
  .option("--dtmf <list>", "digits pressed at times in seconds, e.g. 1@4.5,2@6")
  .option("--out <file>", "write what the caller heard (the agent) as a WAV file")
  .option("--both", "with --out: caller on the left channel, agent on the right")
  .option(
    "--auth-token <token>",
    `sign requests with this Twilio auth token (default: ${envName("twilio.authToken")})`,
  )
  .option(
    "--token <token>",
    `the bridge's token, to read the call's transcript (default: ${envName("server.token")}, else the one the bridge keeps in its data dir)`,
  )
  .option("--max-seconds <n>", "hang up after this long at the latest (default 120)")
  .option("--from <number>", "the caller's number (Twilio From; routes and {{caller}})")
  .option("--to <number>", "the number called (Twilio To; routes and {{called}})")
  .option(
    "--param <name=value>",
    "a call parameter ({{param.NAME}}, sent to the webhook; repeatable)",
    collect,
    [],
  )
  .option("--verbose", "print call events as they happen (stderr)")
  .action(
    async (opts: {
      url?: string;
      wav?: string;
      say: string[];
      dtmf?: string;
      out?: string;
      both?: boolean;
      authToken?: string;
      token?: string;
      maxSeconds?: string;
      verbose?: boolean;
      from?: string;
      to?: string;
      param: string[];
    }) => {
      const config = load(program.opts());
      const { runCallCommand, parseParams } = await import("../tools/twilio-sim/command.ts");
      try {
        const { param, ...rest } = opts;
        const code = await runCallCommand({
          ...rest,
          params: parseParams(param),
          url: opts.url ?? `http://127.0.0.1:${config.server.port}`,
          authToken: opts.authToken ?? config.twilio.authToken,
          bridgeToken: opts.token ?? programToken(config.server.token, config.local.dataDir),
          maxSeconds: opts.maxSeconds !== undefined ? Number(opts.maxSeconds) : undefined,
        });
        process.exit(code);
      } catch (err) {
        process.stderr.write(`voice-bridge call: ${(err as Error).message}\n`);
        process.exit(1);
      }
    },
  );

program
  .command("test")
  .description(
    "run agent tests: scenario files (*.test.yaml) whose calls go through a bridge of their own and the Twilio simulator, each checked against what the agent said, the tools it called and how the call ended; prints a result per scenario, exits 1 when one fails (docs/agent-tests.md)",
  )
  .argument(
    "[files...]",
    "scenario files, or folders to search for *.test.yaml (default: the current folder)",
  )
  .option("--junit <file>", "also write the results as JUnit XML (for CI)")
  .option("--verbose", "print every call's transcript, and the bridges' warnings (stderr)")
  .option(
    "--parallel <n>",
    "scenario files run at once, each on a bridge of its own (default 1); results still print in file order",
    (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 32)
        throw new InvalidArgumentError(`--parallel wants a whole number from 1 to 32, got "${v}"`);
      return n;
    },
  )
  .addHelpText(
    "after",
    `
Each file names its agent (a module's export, settings, or a config file; the
global --config serves files that name none), the caller's lines (text the
service speaks, WAV files, keys) and the expectations. Offline the calls run on
the embedded local service; with ${envName("service.baseUrl")} and ${envName("service.apiKey")} set, on
the hosted service. Every file is checked before the first call: a mistake
stops the run (exit 2) naming the file, the key and what is wrong.`,
  )
  .action(async (files: string[], opts: { junit?: string; verbose?: boolean; parallel?: number }) => {
    const { runTestCommand } = await import("./library/agent-tests/command.ts");
    process.exit(await runTestCommand({ files, config: program.opts().config, ...opts }));
  });

registerCampaignCommand(program, () => load(program.opts()));

program
  .command("dial")
  .description(
    "ask the running bridge to call TO (POST /calls): a number, or for SIP a sip: URI; follows the call until it ends and says how dialling went (human, machine, busy, no-answer, failed, canceled)",
  )
  .argument("<to>", "the number to call (+15550100) or a SIP URI")
  .addOption(
    new Option("--via <carrier>", `sip (through ${envName("outbound.sip.proxy")}) or twilio`)
      .choices(["sip", "twilio"])
      .default("sip"),
  )
  .option("--agent <name>", "the agent who speaks (default: default)")
  .option("--var <name=value>", "a variable for the agent's {{var.NAME}} templates (repeatable)", collect, [])
  .addOption(
    new Option(
      "--amd <policy>",
      "on an answering machine: hang up, leave the message, or no detection",
    ).choices(["hangup", "message", "off"]),
  )
  .option("--message <text>", "the voicemail message (with --amd message; templated like greetings)")
  .option(
    "--from <caller>",
    `caller id (default: ${envName("outbound.sip.from")} / ${envName("outbound.twilio.from")})`,
  )
  .option("--ring-timeout <seconds>", "give up after ringing this long, 5-120 (default 30)")
  .option("--url <url>", "base URL of the bridge (default http://127.0.0.1:PORT)")
  .option(
    "--token <token>",
    `the bridge's token (default: ${envName("server.token")}, else the one the bridge keeps in its data dir)`,
  )
  .option("--no-wait", "return once the call is placed")
  .action(
    async (
      to: string,
      opts: {
        via: string;
        agent?: string;
        var: string[];
        amd?: string;
        message?: string;
        from?: string;
        ringTimeout?: string;
        url?: string;
        token?: string;
        wait: boolean;
      },
    ) => {
      const config = load(program.opts());
      const { runDial, parseVars } = await import("../src/outbound/dial-command.ts");
      const base = (opts.url ?? `http://127.0.0.1:${config.server.port}`).replace(/\/+$/, "");
      try {
        const variables = parseVars(opts.var);
        const code = await runDial({
          base,
          token: opts.token ?? programToken(config.server.token, config.local.dataDir),
          body: {
            to,
            via: opts.via,
            ...(opts.agent ? { agent: opts.agent } : {}),
            ...(Object.keys(variables).length ? { variables } : {}),
            ...(opts.amd ? { machineDetection: opts.amd } : {}),
            ...(opts.message ? { voicemailMessage: opts.message } : {}),
            ...(opts.from ? { from: opts.from } : {}),
            ...(opts.ringTimeout ? { ringTimeoutS: Number(opts.ringTimeout) } : {}),
          },
          wait: opts.wait,
          out: (line) => process.stdout.write(`${line}\n`),
        });
        process.exit(code);
      } catch (err) {
        process.stderr.write(`voice-bridge dial: ${base}: ${(err as Error).message}\n`);
        process.exit(1);
      }
    },
  );

program
  .command("reload")
  .description(
    "make the running bridge read its configuration again (as SIGHUP does): new calls get the new agents and routes, live calls keep theirs; a configuration with errors is refused and the running one stays",
  )
  .option("--url <url>", "base URL of the bridge (default http://127.0.0.1:PORT)")
  .option(
    "--token <token>",
    `the bridge's token (default: ${envName("server.token")}, else the one the bridge keeps in its data dir)`,
  )
  .action(async (opts: { url?: string; token?: string }) => {
    const config = load(program.opts());
    const base = (opts.url ?? `http://127.0.0.1:${config.server.port}`).replace(/\/+$/, "");
    const token = opts.token ?? programToken(config.server.token, config.local.dataDir);
    const { RELOAD_PATH } = await import("./reload.ts");
    try {
      const res = await fetch(`${base}${RELOAD_PATH}`, {
        method: "POST",
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      const body = (await res.json().catch(() => ({}))) as {
        ok?: boolean;
        agents?: string[];
        restartNeeded?: string[];
        error?: string | { message?: string };
      };
      if (res.ok && body.ok) {
        process.stdout.write(`reloaded: agents ${body.agents?.join(", ")}\n`);
        if (body.restartNeeded?.length)
          process.stdout.write(
            `these sections changed and take effect at the next start: ${body.restartNeeded.join(", ")}\n`,
          );
        process.exit(0);
      }
      const error =
        typeof body.error === "string" ? body.error : (body.error?.message ?? `HTTP ${res.status}`);
      process.stderr.write(`voice-bridge reload: refused, the running configuration stays:\n${error}\n`);
      process.exit(2);
    } catch (err) {
      process.stderr.write(`voice-bridge reload: ${base}: ${(err as Error).message}\n`);
      process.exit(1);
    }
  });

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

program
  .command("config")
  .description("print the resolved, validated configuration as JSON (secrets masked)")
  .addHelpText(
    "after",
    () => `
Environment variables, by section of the config file (its key; type; default):
${environmentHelp(program.configureOutput().getOutHelpWidth?.() ?? 80)}`,
  )
  .action(async () => {
    const config = load(program.opts());
    const masked = maskSecrets(config, secretKeyNames(configSchema));
    const engines = usesLocalService(config)
      ? (await import("../src/service/index.ts")).describeEngines(config.local)
      : { all: `hosted service ${config.service.baseUrl ?? "(client default)"}` };
    // Each agent's MCP servers, asked once: the tools they offer, or why they offer none.
    const { describeMcp } = await import("./bridge/mcp.ts");
    const mcpTools = await describeMcp(config, createLogger(config.log, process.stderr));
    process.stdout.write(
      `${JSON.stringify({ ...masked, engines, ...(mcpTools ? { mcpTools } : {}) }, null, 2)}\n`,
    );
  });

await program.parseAsync(process.argv);
