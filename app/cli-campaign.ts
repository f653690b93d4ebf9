// `voice-bridge campaign …`: create, list, show, pause, resume, cancel, add rows to, change and
// download the results of the running bridge's campaigns (its /campaigns, with its token).
import { type Command, Option } from "commander";
import type { Config } from "../src/config/config.ts";
import { programToken } from "./bridge-token.ts";
import { envName } from "./cli-help.ts";

const collect = (value: string, previous: string[]) => [...previous, value];

interface Reach {
  url?: string;
  token?: string;
}

type CommandOptions = import("../src/campaigns/command.ts").CommandOptions;
type Run = (opts: Reach, work: (o: CommandOptions) => Promise<number>) => Promise<void>;
const cmd = () => import("../src/campaigns/command.ts");

export function registerCampaignCommand(program: Command, load: () => Config): void {
  const campaign = program
    .command("campaign")
    .description(
      "work through a list of people to call (the running bridge's /campaigns): create FILE.csv, list, show, pause, resume, cancel, add, set, results",
    );
  const reach = (c: Command) =>
    c
      .option("--url <url>", "base URL of the bridge (default http://127.0.0.1:PORT)")
      .option(
        "--token <token>",
        `the bridge's token (default: ${envName("server.token")}, else the one in its data dir)`,
      );

  const run = async (
    opts: Reach,
    work: (o: import("../src/campaigns/command.ts").CommandOptions) => Promise<number>,
  ) => {
    const config = load();
    const base = (opts.url ?? `http://127.0.0.1:${config.server.port}`).replace(/\/+$/, "");
    const o = {
      base,
      token: opts.token ?? programToken(config.server.token, config.local.dataDir),
      out: (line: string) => process.stdout.write(`${line}\n`),
    };
    try {
      process.exit(await work(o));
    } catch (err) {
      process.stderr.write(`voice-bridge campaign: ${(err as Error).message}\n`);
      process.exit(1);
    }
  };

  registerCreate(campaign, reach, run, load);

  reach(campaign.command("list").description("every campaign with its counts")).action(
    async (opts: Reach) => {
      await run(opts, async (o) => {
        const c = await cmd();
        const r = await c.request(o, "GET", "/campaigns");
        if (c.said(o, r)) return 1;
        for (const v of r.json.campaigns) o.out(c.describeCampaign(v));
        if (r.json.campaigns.length === 0) o.out("no campaigns");
        return 0;
      });
    },
  );

  for (const [name, method, path, what] of [
    ["show", "GET", "", "a campaign's settings and counts by status and outcome"],
    ["pause", "POST", "/pause", "stop starting calls (calls in progress go on)"],
    ["resume", "POST", "/resume", "start calling again"],
    ["cancel", "POST", "/cancel", "cancel the rows not done and hang up the campaign's calls"],
  ] as const)
    reach(campaign.command(name).description(what).argument("<id>", "the campaign's id")).action(
      async (id: string, opts: Reach) => {
        await run(opts, async (o) => {
          const c = await cmd();
          const r = await c.request(o, method, `/campaigns/${encodeURIComponent(id)}${path}`);
          if (c.said(o, r)) return 1;
          o.out(c.describeCampaign(r.json));
          return 0;
        });
      },
    );

  reach(
    campaign
      .command("add")
      .description("add the rows of a list to a campaign")
      .argument("<id>")
      .argument("<file>"),
  ).action(async (id: string, file: string, opts: Reach) => {
    await run(opts, async (o) => {
      const c = await cmd();
      const list = await c.readListFile(file, load().campaigns.maxListBytes);
      const r = await c.request(o, "POST", `/campaigns/${encodeURIComponent(id)}/rows`, list);
      if (c.said(o, r)) return 1;
      c.describeCreated(o, r);
      return 0;
    });
  });

  reach(
    campaign
      .command("set")
      .description("change a running campaign's pace or concurrency (taken at once by every bridge)")
      .argument("<id>")
      .option("--pace <n>", "calls started per minute")
      .option("--concurrency <n>", "calls at once at most")
      .option("--end <time>", "ISO 8601 time after which no call starts"),
  ).action(async (id: string, opts: Reach & { pace?: string; concurrency?: string; end?: string }) => {
    await run(opts, async (o) => {
      const c = await cmd();
      const body = {
        ...(opts.pace ? { pacePerMinute: Number(opts.pace) } : {}),
        ...(opts.concurrency ? { concurrency: Number(opts.concurrency) } : {}),
        ...(opts.end ? { endAt: opts.end } : {}),
      };
      const r = await c.request(o, "PATCH", `/campaigns/${encodeURIComponent(id)}`, body);
      if (c.said(o, r)) return 1;
      o.out(c.describeCampaign(r.json));
      return 0;
    });
  });

  reach(
    campaign
      .command("results")
      .description(
        "the results as CSV: one line per callee (outcome, attempts, call ids, variables, analysis)",
      )
      .argument("<id>")
      .option("-o, --output <file>", "write to FILE (default: standard output)"),
  ).action(async (id: string, opts: Reach & { output?: string }) => {
    await run(opts, async (o) => {
      const c = await cmd();
      const r = await c.request(o, "GET", `/campaigns/${encodeURIComponent(id)}/results.csv`);
      if (c.said(o, r)) return 1;
      if (opts.output) {
        const { writeFile } = await import("node:fs/promises");
        await writeFile(opts.output, r.text);
      } else process.stdout.write(r.text);
      return 0;
    });
  });
}

function registerCreate(
  campaign: Command,
  reach: (c: Command) => Command,
  run: Run,
  load: () => Config,
): void {
  reach(
    campaign
      .command("create")
      .description(
        "create a campaign from a list: CSV (a number column, timezone optional, other columns variables) or JSON rows",
      )
      .argument("<file>", "the list: FILE.csv, or FILE.json ([{number, timeZone?, variables?}])")
      .option("--agent <name>", "the agent who speaks", "default")
      .option("--name <name>", "the campaign's name")
      .addOption(new Option("--via <carrier>", "sip or twilio").choices(["sip", "twilio"]).default("sip"))
      .option("--from <caller>", "caller id (default: the carrier's configured one)")
      .option("--zone <tz>", "the campaign's time zone (rows without their own; default UTC)")
      .option("--hours <days times>", 'calling hours, such as "mon-fri 09:00-18:00" (the default)')
      .addOption(
        new Option("--hours-in <whose>", "whose clock the hours are on").choices(["callee", "campaign"]),
      )
      .option("--concurrency <n>", "calls at once at most (default 5)")
      .option("--pace <n>", "calls started per minute (default 30)")
      .option(
        "--retry <outcome=attempts/delayS>",
        "retry policy of an outcome: busy, no-answer, failed, voicemail, voicemail-left, lost (repeatable)",
        collect,
        [],
      )
      .option("--start <time>", "ISO 8601 time to start calling")
      .option("--end <time>", "ISO 8601 time after which no call starts")
      .option("--ring-timeout <seconds>", "ring timeout of each call, 5-120")
      .addOption(
        new Option("--amd <policy>", "on an answering machine").choices(["hangup", "message", "off"]),
      )
      .option("--message <text>", "the voicemail message (with --amd message)")
      .option("--strict", "refuse the whole list when any row is bad"),
  ).action(async (file: string, opts: Reach & Record<string, string | string[] | boolean | undefined>) => {
    await run(opts, async (o) => {
      const c = await cmd();
      const list = await c.readListFile(file, load().campaigns.maxListBytes);
      const retry = c.parseRetries(opts.retry as string[]);
      const hours = {
        ...(opts.hours ? c.parseHours(String(opts.hours)) : {}),
        ...(opts.hoursIn ? { in: opts.hoursIn } : {}),
      };
      const num = (v: unknown) => (v === undefined ? undefined : Number(v));
      const body = {
        agent: opts.agent,
        via: opts.via,
        ...(opts.name ? { name: opts.name } : {}),
        ...(opts.from ? { from: opts.from } : {}),
        ...(opts.zone ? { timeZone: opts.zone } : {}),
        ...(Object.keys(hours).length ? { callingHours: hours } : {}),
        ...(opts.concurrency ? { concurrency: num(opts.concurrency) } : {}),
        ...(opts.pace ? { pacePerMinute: num(opts.pace) } : {}),
        ...(Object.keys(retry).length ? { retry } : {}),
        ...(opts.start ? { startAt: opts.start } : {}),
        ...(opts.end ? { endAt: opts.end } : {}),
        ...(opts.ringTimeout ? { ringTimeoutS: num(opts.ringTimeout) } : {}),
        ...(opts.amd ? { machineDetection: opts.amd } : {}),
        ...(opts.message ? { voicemailMessage: opts.message } : {}),
        ...(opts.strict ? { strict: true } : {}),
        ...list,
      };
      const r = await c.request(o, "POST", "/campaigns", body);
      if (c.said(o, r)) return 1;
      c.describeCreated(o, r);
      return 0;
    });
  });
}
