// Browser calls (the console's "Call the agent"): what src/main.ts and the tests use.
export { type BrowserCallOptions, BrowserCallTransport, type BrowserSocket } from "./call-transport.ts";
export {
  BROWSER_CALL_PATH,
  BROWSER_FRAME_MS,
  BROWSER_RATE,
  type BrowserClientMessage,
  type BrowserServerMessage,
  parseClientMessage,
} from "./protocol.ts";
export { type BrowserCalls, type BrowserCallsOptions, registerBrowserCalls } from "./routes.ts";
