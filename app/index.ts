// The voice-bridge package's public API (import ... from "voice-bridge"): start a bridge in code,
// define agents with tools and hooks in TypeScript. See docs/typescript-api.md.
export { z } from "zod";
export type { CallStartDecision, CallTurn, LiveCall } from "../src/agents/code.ts";
export type { CallStartRequest } from "../src/agents/webhook.ts";
export type {
  CampaignCall,
  CampaignChange,
  CampaignCounts,
  CampaignView,
  FieldProblem,
} from "../src/campaigns/campaign.ts";
export type { Created as CampaignCreated, ListSource } from "../src/campaigns/control.ts";
export type { AgentInput } from "../src/config/agent.ts";
export { ConfigError } from "../src/config/config.ts";
export type { McpServerInput } from "../src/config/mcp-servers.ts";
export type { MachineDetection } from "../src/config/outbound.ts";
export type { Logger } from "../src/core/log.ts";
export type { DialAccepted, DialBody, DialVia } from "../src/outbound/request.ts";
export type {
  AmdResult,
  CallAnalysis,
  CallEvent,
  CallRecord,
  DialOutcome,
  TurnView,
} from "../src/records/call-record.ts";
export type { ToolCall, ToolContext, TransferRequest } from "../src/session/code-tools.ts";
export type { Entrances } from "./banner.ts";
export type { CallActivity, CallEventMessage, ConsoleMessage } from "./console/live-events.ts";
export type { ExpectationResult } from "./library/agent-tests/expectations.ts";
export { junitXml } from "./library/agent-tests/junit.ts";
export { type FormatOptions, formatResults } from "./library/agent-tests/report.ts";
export {
  type RunScenariosOptions,
  runScenarios,
  type ScenarioResult,
} from "./library/agent-tests/run.ts";
export {
  type CallerLine,
  type Expectation,
  type Scenario,
  ScenarioFileError,
  type ScenarioSet,
} from "./library/agent-tests/scenario.ts";
export {
  CampaignError,
  type CampaignSettingsInput,
  type Campaigns,
} from "./library/campaigns.ts";
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
export type { ReloadResult } from "./reload.ts";
