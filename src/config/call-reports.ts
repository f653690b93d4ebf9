// The `callReports` section: each ended call's record, signed and POSTed to the user's server.
import { z } from "zod";
import { url } from "./values.ts";

// Named once each: the check that a URL comes with its secret names both variables.
const URL_ENV = "CALL_REPORT_URL";
const SECRET_ENV = "CALL_REPORT_SECRET";

export const callReportsSchema = z
  .object({
    url: url.optional().meta({
      env: URL_ENV,
      description: "Each ended call's record is POSTed here (JSON, signed with `secret`); unset: no reports.",
    }),
    secret: z.string().min(16, { error: "expected a secret of at least 16 characters" }).optional().meta({
      env: SECRET_ENV,
      secret: true,
      description: "Shared secret of the HMAC-SHA256 signature; required with `url`.",
    }),
    dir: z.string().min(1).optional().meta({
      env: "CALL_REPORT_DIR",
      description: "Reports wait here until delivered; default: <local.dataDir>/call-reports.",
    }),
  })
  .prefault({})
  .superRefine((v, ctx) => {
    if (v.url && !v.secret)
      ctx.addIssue({
        code: "custom",
        path: ["secret"],
        message: `required when callReports.url (${URL_ENV}) is set: set ${SECRET_ENV}`,
      });
  })
  .meta({ description: "Call reports: each ended call's record, signed and POSTed to your server." });
