// Tracing is on only when an OTLP endpoint is set (and not turned off): without one no exporter is
// made and no OpenTelemetry module is even loaded. A fresh Node process tells which modules it
// resolved (a module hook), so what the gate loads is seen, not assumed.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { startTracing } from "../../../app/tracing/tracing.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { systemClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";

const run = promisify(execFile);
const root = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** In a new process: starts tracing with `env`, says whether it did and which @opentelemetry modules it resolved. */
async function inFreshProcess(env: Record<string, string>): Promise<{ tracing: boolean; loaded: string[] }> {
  const script = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({
      resolve(specifier, context, next) {
        if (specifier.startsWith("@opentelemetry/")) loaded.push(specifier);
        return next(specifier, context);
      },
    });
    const { startTracing } = await import(${JSON.stringify(root("app/tracing/tracing.ts"))});
    const { loadConfig } = await import(${JSON.stringify(root("src/config/config.ts"))});
    const { systemClock } = await import(${JSON.stringify(root("src/core/clock.ts"))});
    const { silentLogger } = await import(${JSON.stringify(root("src/core/log.ts"))});
    const config = loadConfig({ env: ${JSON.stringify(env)} });
    const tracing = await startTracing(config.tracing, { clock: systemClock, log: silentLogger, instance: "test" });
    await tracing?.shutdown();
    console.log(JSON.stringify({ tracing: tracing !== undefined, loaded: [...new Set(loaded)] }));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH ?? "" },
  });
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

const opts = { clock: systemClock, log: silentLogger, instance: "test" };
const ENDPOINT = "http://127.0.0.1:9/";

describe("tracing is on only when asked for", () => {
  it("makes no tracer without an endpoint, or when turned off by OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER", async () => {
    for (const env of [
      {},
      { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_SDK_DISABLED: "true" },
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: "none" },
    ])
      expect(await startTracing(loadConfig({ env }).tracing, opts), JSON.stringify(env)).toBeUndefined();
  });

  it("loads no OpenTelemetry module without an endpoint, and the SDK and exporter with one", async () => {
    expect(await inFreshProcess({})).toEqual({ tracing: false, loaded: [] });
    const on = await inFreshProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT });
    expect(on.tracing).toBe(true);
    expect(on.loaded).toEqual(
      expect.arrayContaining(["@opentelemetry/sdk-trace", "@opentelemetry/exporter-trace-otlp-http"]),
    );
  }, 30_000);

  it("posts to the traces endpoint as given, or to the base endpoint's /v1/traces", async () => {
    const url = async (env: Record<string, string>) => {
      const tracing = await startTracing(loadConfig({ env }).tracing, opts);
      await tracing?.shutdown();
      return tracing?.url;
    };
    expect(await url({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toBe(
      "http://collector:4318/v1/traces",
    );
    expect(
      await url({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces.example/otlp",
      }),
    ).toBe("http://traces.example/otlp");
  });

  it("names the variable of a bad value, and refuses gRPC", () => {
    expect(() => loadConfig({ env: { OTEL_EXPORTER_OTLP_HEADERS: "api-key" } })).toThrow(
      /OTEL_EXPORTER_OTLP_HEADERS \(tracing.headers\): expected headers as name=value pairs/,
    );
    expect(() => loadConfig({ env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL \(tracing.protocol\): .*not gRPC/,
    );
  });
});
