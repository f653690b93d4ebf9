// The bridge a scenario set's calls go to: the real bridge (the library's), on loopback, answering
// Twilio calls for a throwaway account whose REST API is the simulator's (so hang-ups and
// transfers are seen), its data in a temporary folder; plus the caller's voice and the judge, on
// the service the bridge's calls use.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentCode } from "../../../src/agents/code.ts";
import { SvcClient } from "../../../src/api/client.ts";
import type { Logger } from "../../../src/core/log.ts";
import { SimulatedRestApi } from "../../../tools/twilio-sim/rest-api.ts";
import { runBridge, serviceOf, type VoiceBridge } from "../create-bridge.ts";
import { type Speak, serviceSpeech } from "./caller.ts";
import type { Judge } from "./expectations.ts";
import { chatJudge } from "./judge.ts";
import { type BridgeRuntime, bridgeConfig, type PreparedSet } from "./prepare.ts";

export interface TestBridge {
  readonly bridge: VoiceBridge;
  readonly rest: SimulatedRestApi;
  readonly twilio: { accountSid: string; authToken: string };
  readonly speak: Speak;
  readonly judge: Judge;
  /** The variables a call gets (as onCallStart would give them), by CallSid, set before it is placed. */
  readonly variables: Map<string, Record<string, string>>;
  close(): Promise<void>;
}

/** Each agent's onCallStart, then the call's variables from the scenario over the ones it gave. */
function withVariables(
  code: ReadonlyMap<string, AgentCode>,
  agents: readonly string[],
  variables: ReadonlyMap<string, Record<string, string>>,
): Map<string, AgentCode> {
  const out = new Map(code);
  for (const name of agents) {
    const own = code.get(name);
    out.set(name, {
      ...own,
      async onCallStart(call) {
        const decision = await own?.onCallStart?.(call);
        const given = variables.get(call.callId);
        return given ? { ...decision, variables: { ...decision?.variables, ...given } } : decision;
      },
    });
  }
  return out;
}

export async function startTestBridge(
  p: PreparedSet,
  env: BridgeRuntime["env"],
  log: Logger,
): Promise<TestBridge> {
  const twilio = {
    accountSid: `AC${randomBytes(16).toString("hex")}`,
    authToken: randomBytes(16).toString("hex"),
  };
  const dataDir = await mkdtemp(join(tmpdir(), "voice-bridge-test-"));
  const cleanup: Array<() => Promise<unknown>> = [() => rm(dataDir, { recursive: true, force: true })];
  const close = async () => {
    for (const step of cleanup.reverse()) await step();
  };
  try {
    const rest = await SimulatedRestApi.start(twilio.accountSid, twilio.authToken);
    cleanup.push(() => rest.close());
    const config = bridgeConfig(p, { env, dataDir, twilio: { ...twilio, apiBase: rest.url } });
    const variables = new Map<string, Record<string, string>>();
    // Only when a scenario gives variables: an agent's onCallStart stands in for the call-start webhook.
    const code = p.set.scenarios.some((s) => s.variables)
      ? withVariables(p.code, ["default", ...Object.keys(config.agents)], variables)
      : p.code;
    const bridge = await runBridge(config, { log, code });
    cleanup.push(() => bridge.close());
    const service = serviceOf(bridge)!;
    const client = new SvcClient({ ...service, planTier: config.service.planTier, logger: log });
    return {
      bridge,
      rest,
      twilio,
      speak: serviceSpeech(client, config.service.ttsModel),
      judge: chatJudge(client, p.set.judgeModel ?? config.service.chatModel),
      variables,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
