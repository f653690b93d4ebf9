// The environment of a user's shell for the examples' commands: none of this shell's hosted
// service, config file or colour settings.
export function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(SVC_|VOICE_BRIDGE_CONFIG$|FORCE_COLOR$|NO_COLOR$)/.test(k),
    ),
  );
}
