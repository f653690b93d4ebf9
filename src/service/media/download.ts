// Fetching a caller-given http(s) URL (file uploads by url, media parts in chat requests) as a
// byte stream with a size cap. Failures are parameter errors naming the field, as the spec asks
// for URLs the server cannot fetch.
import { badParam, tooLarge } from "../errors.ts";

export interface Download {
  body: AsyncIterable<Uint8Array>;
  /** Stops the transfer (e.g. once the size cap is passed). */
  abort(): void;
  /** Last path segment of the final URL, decoded, or "download". */
  filename: string;
  contentType: string | undefined;
}

export interface DownloadOptions {
  /** Request field that holds the URL, for error messages. */
  param: string;
  maxBytes: number;
  timeoutMs?: number;
}

export async function openDownload(raw: string, opts: DownloadOptions): Promise<Download> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badParam(opts.param, `not a valid URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw badParam(opts.param, `URL scheme must be http or https (got ${url.protocol.replace(":", "")})`);
  }
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(new Error("timed out")), opts.timeoutMs ?? 30_000);
  let res: Response;
  try {
    res = await fetch(url, { signal: ctrl.signal, redirect: "follow" });
  } catch (err) {
    clearTimeout(timer);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    throw badParam(opts.param, `the server could not fetch ${url.href}: ${why}`, "url_unreachable");
  }
  if (!res.ok || !res.body) {
    clearTimeout(timer);
    void res.body?.cancel();
    throw badParam(
      opts.param,
      `the server could not fetch ${url.href}: HTTP ${res.status}`,
      "url_unreachable",
    );
  }
  const length = Number(res.headers.get("content-length") ?? Number.NaN);
  if (length > opts.maxBytes) {
    clearTimeout(timer);
    ctrl.abort();
    throw tooLarge(
      `${opts.param}: the resource is ${length} bytes; at most ${opts.maxBytes} are accepted`,
      opts.param,
    );
  }
  const body = res.body;
  const segment = new URL(res.url || url.href).pathname.split("/").pop() ?? "";
  let filename = "download";
  try {
    filename = decodeURIComponent(segment) || "download";
  } catch {
    filename = segment || "download";
  }
  return {
    body: (async function* () {
      try {
        for await (const chunk of body) yield chunk;
      } finally {
        clearTimeout(timer);
      }
    })(),
    abort: () => ctrl.abort(),
    filename,
    contentType: res.headers.get("content-type") ?? undefined,
  };
}
