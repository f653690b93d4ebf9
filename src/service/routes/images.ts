// E7 POST /v1/images/generations and E8 POST /v1/images/edits on the image engine (the embedded
// placeholder unless the service is given another), and GET /v1/images/files/:name serving `url`
// results for 2 hours. A prompt hitting the content blocklist is answered with finish_reason
// `content_filtered` and no image.
import multipart from "@fastify/multipart";
import type { FastifyRequest } from "fastify";
import type { ImageData, ImageResult } from "../../api/types/images.ts";
import { API_PREFIX, PATHS } from "../../api/types/paths.ts";
import type { ServiceRoute } from "../context.ts";
import { ContentFilter } from "../engines/image/content-filter.ts";
import type { ImageOutput } from "../engines/image/engine.ts";
import { PlaceholderImageEngine } from "../engines/image/placeholder.ts";
import { badParam, notFound } from "../errors.ts";
import { EDIT_IMAGE_MAX_BYTES, readEditInput } from "./images-edit-input.ts";
import { checkN, type ImageParams, parseGenerationSize, parseImageParams } from "./images-params.ts";
import { ImageUrlStore } from "./images-urls.ts";

/** Base64 of the largest image, plus room for the other fields. */
const EDIT_BODY_LIMIT = Math.ceil((EDIT_IMAGE_MAX_BYTES * 4) / 3) + 1024 * 1024;
const FILES_PATH = `${API_PREFIX}/images/files`;

export const imagesRoute: ServiceRoute = async (app, { ctx }) => {
  const opts = ctx.images ?? {};
  const now = opts.now ?? Date.now;
  const engine = opts.engine ?? new PlaceholderImageEngine();
  const filter = new ContentFilter(opts.blocklist);
  const urls = new ImageUrlStore(ctx.dataDir, now);
  app.addHook("onClose", async () => urls.close());
  await app.register(multipart, {
    // Past fileSize a part is marked truncated (a 413 then), not an exception mid-parse.
    limits: { fileSize: EDIT_IMAGE_MAX_BYTES, files: 4, fields: 32, fieldSize: EDIT_BODY_LIMIT, parts: 40 },
    throwFileSizeLimit: false,
  });

  async function answer(
    request: FastifyRequest,
    what: "generation" | "edit",
    p: ImageParams,
    render: () => Promise<ImageOutput>,
  ): Promise<ImageResult> {
    const created = Math.floor(now() / 1000);
    const blocked = filter.match(p.prompt);
    if (blocked !== undefined) {
      request.log.info({ what, term: blocked }, "image prompt stopped by the content filter");
      return { created, data: [{ seed: p.seed, finish_reason: "content_filtered" }] };
    }
    const out = await render();
    request.log.info(
      { what, engine: engine.name, applied: out.applied, width: out.width, height: out.height, seed: p.seed },
      `image ${what} by the ${engine.name} engine: ${out.applied.join(", ") || "no operation named in the prompt, image unchanged"}`,
    );
    const entry: ImageData = { seed: p.seed, finish_reason: "success" };
    if (p.responseFormat === "b64_json") {
      entry.b64_json = out.png.toString("base64");
    } else {
      const name = await urls.put(request.account, out.png);
      entry.url = `${request.protocol}://${request.headers.host ?? "127.0.0.1"}${FILES_PATH}/${name}`;
    }
    return { created, data: [entry] };
  }

  app.post(`${API_PREFIX}${PATHS.imageGenerations}`, async (request) => {
    const body = request.body;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw badParam("body", "must be a JSON object");
    }
    const f = body as Record<string, unknown>;
    const p = parseImageParams(f, "json");
    const { width, height } = parseGenerationSize(f.size);
    checkN(f.n);
    return answer(request, "generation", p, () =>
      engine.generate({
        prompt: p.prompt,
        negativePrompt: p.negativePrompt,
        width,
        height,
        seed: p.seed,
        steps: p.steps,
        cfgScale: p.cfgScale,
        textMode: p.textMode,
      }),
    );
  });

  app.post(`${API_PREFIX}${PATHS.imageEdits}`, { bodyLimit: EDIT_BODY_LIMIT }, async (request) => {
    const input = await readEditInput(request);
    const p = parseImageParams(input.fields, request.isMultipart() ? "form" : "json");
    // `size` is accepted and ignored: the result has the input's size.
    return answer(request, "edit", p, () =>
      engine.edit({
        image: input.image,
        prompt: p.prompt,
        negativePrompt: p.negativePrompt,
        seed: p.seed,
        steps: p.steps,
        cfgScale: p.cfgScale,
        textMode: p.textMode,
      }),
    );
  });

  app.get<{ Params: { name: string } }>(`${FILES_PATH}/:name`, async (request, reply) => {
    const png = await urls.get(request.account, request.params.name);
    if (!png)
      throw notFound("image URL unknown or expired (image URLs are valid for 2 hours)", null, "url_expired");
    return reply.header("content-type", "image/png").send(png);
  });
};
