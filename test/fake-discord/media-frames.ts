// What a media frame from the bot is, as a receiving client tells: DAVE frames end with the protocol's
// magic marker (0xFAFA); Discord's 3-byte Opus silence frame is never end-to-end encrypted.

export function isDaveFrame(payload: Uint8Array): boolean {
  const n = payload.length;
  return n >= 2 && payload[n - 1] === 0xfa && payload[n - 2] === 0xfa;
}

export function isSilenceFrame(payload: Uint8Array): boolean {
  return payload.length === 3 && payload[0] === 0xf8 && payload[1] === 0xff && payload[2] === 0xfe;
}
