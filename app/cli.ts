// Command-line entry point. Each subcommand loads and validates the configuration first,
// so a bad key stops the program with one clear message before anything starts.
import { Command, Option } from "commander";
import { type Config, ConfigError, loadConfig, usesLocalService } from "../src/config/config.ts";
import { createLogger, logsArePretty } from "../src/core/log.ts";
import { programToken } from "./bridge-token.ts";

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
  .addHelpText(
    "after",
    `
Configuration comes from defaults, then the config file, then environment variables:
  HOST, PORT, PUBLIC_URL            where the bridge listens and how callers' providers reach it
  CONSOLE_ENABLED, BRIDGE_TOKEN     the live console at / (on with the local service); the token it and /calls
                                    ask for (unset: made at first start, kept in <data dir>/bridge-token; off: none)
  SVC_BASE_URL, SVC_API_KEY         hosted service; leave both unset to use the embedded local service
  SVC_LOCAL_DATA_DIR, SVC_LOCAL_API_KEYS   embedded local service (and where the bridge keeps its data)
  DATABASE_URL, BRIDGE_INSTANCE     call records in PostgreSQL, shared by every bridge on it (unset: SQLite
                                    in the data dir); this bridge's name in them (default: the host name)
  SIP_PORT (5060, off), SIP_HOST, SIP_PUBLIC_IP, RTP_PORTS, SIP_CODECS   SIP calls straight in
  SIP_OUTBOUND_PROXY, SIP_OUTBOUND_USER, SIP_OUTBOUND_PASSWORD, SIP_OUTBOUND_FROM   calls the bridge places
                                    over SIP (voice-bridge dial, POST /calls); TWILIO_OUTBOUND_FROM for Twilio
  OUTBOUND_MAX_CONCURRENT (10), OUTBOUND_CALLS_PER_SECOND (1)   limits on placing calls
  AUDIOSOCKET_PORT (off)            Asterisk AudioSocket
  DISCORD_TOKEN, DISCORD_RESPOND_TO (all|mention), DISCORD_AUTO_JOIN   the Discord voice bot
  LOG_LEVEL (info), LOG_FORMAT (auto|pretty|json)
Several agents, chosen per call: agent:, agents:, routes: and agentWebhook: in the config file
(docs/agents.md); SIGHUP or 'voice-bridge reload' reads them again without dropping calls.
Run 'voice-bridge config' to see the resolved configuration; every setting: docs/configuration.md.`,
  );

program
  .command("start")
  .description(
    "run the bridge (the main job): the live console and browser calls at /, Twilio endpoints, SIP, the Discord bot when DISCORD_TOKEN is set, /metrics, /healthz, /readyz, /calls/:id; uses the embedded local service when no SVC_BASE_URL / SVC_API_KEY is set",
  )
  .option("--host <host>", "address to listen on (env HOST, default 0.0.0.0)")
  .option("--port <port>", "port to listen on (env PORT, default 8080)")
  .option(
    "--shards <n|auto>",
    "run the Discord bot as N shard processes, or Discord's count (env DISCORD_SHARDS)",
  )
  .action(async (opts: { host?: string; port?: string; shards?: string }) => {
    const { runShards, shardOfThisProcess, shardPort } = await import("./sharding.ts");
    let config = load(program.opts(), {
      server: { host: opts.host, port: opts.port },
      discord: { shards: opts.shards },
    });
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
    const startOverrides = {
      server: { host: opts.host, port: opts.port },
      discord: { shards: opts.shards },
    };
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

program
  .command("service")
  .description("run the local service (the spec's HTTP API on this machine, no account, no network)")
  .option("--host <host>", "address to listen on (env SVC_LOCAL_HOST, default 127.0.0.1)")
  .option("--port <port>", "port to listen on (env SVC_LOCAL_PORT, default 8080)")
  .option("--data-dir <dir>", "files, metadata and the dev key (env SVC_LOCAL_DATA_DIR, default .data)")
  .addOption(
    new Option(
      "--engines <profile>",
      "speech/chat engines; 'synthetic' is for benchmarks only: tones, a fixed transcript (env SVC_ENGINE_PROFILE)",
    ).choices(["standard", "synthetic"]),
  )
  .action(async (opts: { host?: string; port?: string; dataDir?: string; engines?: string }) => {
    const port = opts.port ?? process.env.SVC_LOCAL_PORT ?? "8080";
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
  .option("--auth-token <token>", "sign requests with this Twilio auth token (default: TWILIO_AUTH_TOKEN)")
  .option(
    "--token <token>",
    "the bridge's token, to read the call's transcript (default: BRIDGE_TOKEN, else the one the bridge keeps in its data dir)",
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
  .command("dial")
  .description(
    "ask the running bridge to call TO (POST /calls): a number, or for SIP a sip: URI; follows the call until it ends and says how dialling went (human, machine, busy, no-answer, failed, canceled)",
  )
  .argument("<to>", "the number to call (+15550100) or a SIP URI")
  .addOption(
    new Option("--via <carrier>", "sip (through SIP_OUTBOUND_PROXY) or twilio")
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
  .option("--from <caller>", "caller id (default: SIP_OUTBOUND_FROM / TWILIO_OUTBOUND_FROM)")
  .option("--ring-timeout <seconds>", "give up after ringing this long, 5-120 (default 30)")
  .option("--url <url>", "base URL of the bridge (default http://127.0.0.1:PORT)")
  .option(
    "--token <token>",
    "the bridge's token (default: BRIDGE_TOKEN, else the one the bridge keeps in its data dir)",
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
    "the bridge's token (default: BRIDGE_TOKEN, else the one the bridge keeps in its data dir)",
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
  .action(async () => {
    const config = load(program.opts());
    const masked = structuredClone(config);
    if (masked.service.apiKey) masked.service.apiKey = "***";
    if (masked.server.token) masked.server.token = "***";
    if (masked.twilio.authToken) masked.twilio.authToken = "***";
    if (masked.local.chatUpstreamApiKey) masked.local.chatUpstreamApiKey = "***";
    if (masked.local.asrUpstreamApiKey) masked.local.asrUpstreamApiKey = "***";
    if (masked.local.ttsUpstreamApiKey) masked.local.ttsUpstreamApiKey = "***";
    if (masked.discord.token) masked.discord.token = "***";
    if (masked.callReports.secret) masked.callReports.secret = "***";
    if (masked.agentWebhook) masked.agentWebhook.secret = "***";
    for (const r of masked.routes) if (r.agentWebhook) r.agentWebhook.secret = "***";
    if (masked.store.databaseUrl)
      masked.store.databaseUrl = masked.store.databaseUrl.replace(/:[^:@/]*@/, ":***@");
    masked.local.apiKeys = masked.local.apiKeys.map(() => "***");
    const engines = usesLocalService(config)
      ? (await import("../src/service/index.ts")).describeEngines(config.local)
      : { all: `hosted service ${config.service.baseUrl ?? "(client default)"}` };
    process.stdout.write(`${JSON.stringify({ ...masked, engines }, null, 2)}\n`);
  });

await program.parseAsync(process.argv);
