// Model names of the chat formats and their rules: unknown names are 404, known names used where
// they are not served (E3 serves only svc-3.7-flash) are 400, reasoning effort per model.
import {
  CHAT_MODELS,
  REASONING_EFFORTS,
  REASONING_EFFORTS_BY_MODEL,
  type ReasoningEffort,
} from "../../api/types/index.ts";
import { ApiError, badParam, missingParam } from "../errors.ts";

/** The validated chat model name of a request, from the models `allowed` for the endpoint. */
export function chatModel(v: unknown, allowed: readonly string[] = CHAT_MODELS): string {
  if (v === undefined || v === null) throw missingParam("model", `one of ${allowed.join(", ")}`);
  if (typeof v !== "string") throw badParam("model", "must be a string", "invalid_type");
  if (!(CHAT_MODELS as readonly string[]).includes(v)) {
    throw new ApiError(
      404,
      `model ${JSON.stringify(v)} does not exist; chat models are ${CHAT_MODELS.join(", ")}`,
      {
        param: "model",
        code: "model_not_found",
      },
    );
  }
  if (!allowed.includes(v)) {
    throw badParam(
      "model",
      `${v} is not served by this endpoint; use ${allowed.join(" or ")}`,
      "model_not_supported",
    );
  }
  return v;
}

/** Efforts a model accepts (svc-3.5-flash-2603: low and high only). */
export function effortsOf(model: string): readonly ReasoningEffort[] {
  return REASONING_EFFORTS_BY_MODEL[model] ?? REASONING_EFFORTS;
}

export function reasoningEffort(model: string): (v: unknown, param: string) => ReasoningEffort {
  return (v, param) => {
    const allowed = effortsOf(model);
    if (typeof v !== "string" || !(allowed as readonly string[]).includes(v)) {
      const which = allowed.length < REASONING_EFFORTS.length ? ` for ${model}` : "";
      throw badParam(
        param,
        `must be one of ${allowed.map((e) => `"${e}"`).join(", ")}${which} (got ${JSON.stringify(v)})`,
      );
    }
    return v as ReasoningEffort;
  };
}
