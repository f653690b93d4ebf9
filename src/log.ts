// Logging: pino, human-readable in a terminal, JSON lines otherwise (files, containers, CI).
import { type Logger, pino } from "pino";
import type { Config } from "./config.ts";

export type { Logger };

/** Whether logs on `stream` are for a person (pino-pretty) rather than JSON lines. */
export function logsArePretty(cfg: Config["log"], stream: NodeJS.WriteStream = process.stdout): boolean {
  return cfg.format === "pretty" || (cfg.format === "auto" && stream.isTTY === true);
}

export function createLogger(cfg: Config["log"], stream: NodeJS.WriteStream = process.stdout): Logger {
  if (!logsArePretty(cfg, stream)) return pino({ level: cfg.level, base: { pid: process.pid } });
  return pino({
    level: cfg.level,
    transport: {
      target: "pino-pretty",
      options: { colorize: true, translateTime: "HH:MM:ss.l", ignore: "pid,hostname" },
    },
  });
}

/** A logger that drops everything, for library use and tests that do not look at logs. */
export const silentLogger: Logger = pino({ level: "silent" });
