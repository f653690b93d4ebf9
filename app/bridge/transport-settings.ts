// What each transport is given of the configuration: the bridges take their own settings, never
// the whole Config, so a bridge says what it reads and the schema can change without it.
import type { DiscordSettings } from "../../bridges/discord/index.ts";
import type { SignallingConfig } from "../../bridges/sip/index.ts";
import type { TwilioSettings } from "../../bridges/twilio/index.ts";
import type { Config } from "../../src/config/config.ts";

export function twilioSettings(config: Config): TwilioSettings {
  return {
    publicUrl: config.server.publicUrl,
    authToken: config.twilio.authToken,
    accountSid: config.twilio.accountSid,
  };
}

/** SIP signalling's settings, for a bridge whose SIP is on (`sip.port` a number). */
export function sipSettings(sip: Config["sip"], port: number): SignallingConfig {
  return {
    port,
    host: sip.host,
    publicIp: sip.publicIp,
    codecs: sip.codecs,
    mediaTimeoutS: sip.mediaTimeoutS,
    allowFrom: sip.allowFrom,
    rateLimit: sip.rateLimit,
    users: sip.users,
    digestAlgorithms: sip.digestAlgorithms,
    registrations: sip.registrations,
    tlsPort: sip.tlsPort,
    tlsCert: sip.tlsCert,
    tlsKey: sip.tlsKey,
    tlsVerify: sip.tlsVerify,
    srtp: sip.srtp,
  };
}

/** The bot's settings, for a bridge with a Discord token. */
export function discordSettings(discord: Config["discord"], token: string): DiscordSettings {
  return {
    token,
    apiBase: discord.apiBase,
    autoJoin: discord.autoJoin,
    respondTo: discord.respondTo,
    agentName: discord.agentName,
    textLog: discord.textLog,
  };
}
