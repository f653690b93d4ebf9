// A call's files (transcript, recording) are named after its call id, which comes from outside
// (a Twilio CallSid, a client's id): only letters, digits, `_`, `.` and `-` are kept, anything
// else becomes `_`, so no id can reach another directory. Callers always add an extension, so
// even an id of "." or ".." names a file, never a directory.

/** The part of a call's file names before the extension: the call id with unsafe characters as `_`. */
export function callFileStem(callId: string): string {
  return callId.replace(/[^\w.-]/g, "_");
}
