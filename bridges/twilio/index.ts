// Twilio Media Streams bridge: what app/bridge/ and the tests use.
export type { CallControl, RestCredentials } from "./call-control.ts";
export { restCallControl } from "./call-control.ts";
export { TWILIO_RATE, TwilioCallTransport } from "./call-transport.ts";
export {
  MEDIA_PATH,
  registerTwilio,
  type TwilioOptions,
  type TwilioRoutes,
  type TwilioSettings,
  VOICE_PATH,
} from "./routes.ts";
