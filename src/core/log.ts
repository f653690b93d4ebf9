// Logging: pino, human-readable in a terminal, JSON lines otherwise (files, containers, CI).
import { type Logger, pino } from "pino";

export type { Logger };

/** How logs are written: a level, and JSON lines or lines for a person (`auto`: a person when a terminal reads them). */
export interface LogOptions {
  level: string;
  format: "auto" | "pretty" | "json";
}

/** Whether logs on `stream` are for a person (pino-pretty) rather than JSON lines. */
export function logsArePretty(cfg: LogOptions, stream: NodeJS.WriteStream = process.stdout): boolean {
  return cfg.format === "pretty" || (cfg.format === "auto" && stream.isTTY === true);
}

export function createLogger(cfg: LogOptions, stream: NodeJS.WriteStream = process.stdout): Logger {
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
