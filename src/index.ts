// The voice-bridge package's public API (import ... from "voice-bridge"): start a bridge in code,
// define agents with tools and hooks in TypeScript. See docs/typescript-api.md.
export { z } from "zod";
export type { CallStartDecision, CallTurn } from "./agents/code.ts";
export type { AgentInput } from "./agents/schema.ts";
export type { CallStartRequest } from "./agents/webhook.ts";
export type { Entrances } from "./banner.ts";
export { ConfigError } from "./config.ts";
export type { CallActivity, CallEventMessage, ConsoleMessage } from "./console/live-events.ts";
export {
  type BridgeEvents,
  type BridgeOptions,
  createBridge,
  type VoiceBridge,
} from "./library/create-bridge.ts";
export {
  type AgentDefinition,
  type AgentHooks,
  type DefinedAgent,
  defineAgent,
} from "./library/define-agent.ts";
export { DialError } from "./library/dial.ts";
export { type Tool, type ToolDefinition, tool } from "./library/tool.ts";
export type { Logger } from "./log.ts";
export type { MachineDetection } from "./outbound/config.ts";
export type { DialAccepted, DialBody, DialVia } from "./outbound/request.ts";
export type { ReloadResult } from "./reload.ts";
export type { ToolCall, ToolContext } from "./session/code-tools.ts";
export type {
  AmdResult,
  CallAnalysis,
  CallEvent,
  CallRecord,
  DialOutcome,
  TurnView,
} from "./session/transcript.ts";
