// The Discord voice bridge: a bot that brings the agent into voice channels, one conversation each.
export { type DiscordBot, type DiscordBotOptions, type DiscordSettings, startDiscordBot } from "./bot.ts";
