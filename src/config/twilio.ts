// The `twilio` section: the Twilio account that signs Media Streams requests and takes REST calls.
import { z } from "zod";

export const twilioSchema = z
  .object({
    accountSid: z
      .string()
      .regex(/^AC[0-9a-fA-F]{32}$/, { error: "expected an Account SID: AC followed by 32 hex digits" })
      .optional()
      .meta({
        env: "TWILIO_ACCOUNT_SID",
        description:
          "Account SID (AC…); with authToken it enables hang-up and transfer through the REST API.",
      }),
    authToken: z.string().min(1).optional().meta({
      env: "TWILIO_AUTH_TOKEN",
      secret: true,
      description: "Auth token: checks X-Twilio-Signature on the voice webhook and the media WebSocket.",
    }),
  })
  .prefault({})
  .meta({ description: "Twilio Media Streams: the account that signs requests and takes REST calls." });
