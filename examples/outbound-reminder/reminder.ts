// A dental practice's appointment reminders: the bridge calls each patient on the list, the
// agent's variables carry the appointment (name, time), a voicemail gets a message after its beep
// instead of a conversation, and onCallEnd logs how each call went (its dial outcome). The agent
// itself is in reminder-agent.ts.
//
//   SIP_OUTBOUND_PROXY=sip:trunk.example.com SIP_OUTBOUND_USER=… SIP_OUTBOUND_PASSWORD=… \
//   SIP_OUTBOUND_FROM=+15557770000 npm start -- appointments.json
//   npm test                          the agent's scenarios (reminder.test.yaml) on simulated calls
//
// (Over Twilio instead: REMINDER_VIA=twilio with TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, PUBLIC_URL
// and TWILIO_OUTBOUND_FROM.) The process exits once every call has ended.
import { readFile } from "node:fs/promises";
import { type CallRecord, createBridge, DialError, type DialVia, defineAgent } from "voice-bridge";
import { reminder as receptionist } from "./reminder-agent.ts";

interface Appointment {
  name: string;
  /** When, as the agent should say it ("Thursday at 3 pm"). */
  time: string;
  /** A number, or (over SIP) a sip: URI. */
  phone: string;
}

const file = process.argv[2] ?? "appointments.json";
const appointments = JSON.parse(await readFile(file, "utf8")) as Appointment[];
const via: DialVia = process.env.REMINDER_VIA === "twilio" ? "twilio" : "sip";

/** Who each call is for (by call id), and the calls not over yet. */
const patients = new Map<string, Appointment>();
const ended = new Set<string>();
let allEnded: () => void = () => {};

const VOICEMAIL =
  "Hello {{var.name}}, this is Acme Dental reminding you of your appointment {{var.time}}. " +
  "To move it, please call us on 555 0100. Goodbye.";

const reminder = defineAgent({
  ...receptionist,
  onCallEnd: (record: CallRecord) => {
    const who = patients.get(record.callId)?.name ?? record.to;
    const detail = record.dialReason ?? record.endReason ?? "";
    console.log(`reminder ${record.callId} for ${who}: ${record.dialOutcome} (${detail})`);
    ended.add(record.callId);
    if ([...patients.keys()].every((id) => ended.has(id))) allEnded();
  },
});

const bridge = await createBridge({ agents: { reminder } });
console.log(`reminder ready: ${bridge.url}`);

for (const a of appointments) {
  for (;;) {
    try {
      const { callId } = await bridge.dial({
        to: a.phone,
        via,
        agent: "reminder",
        variables: { name: a.name, time: a.time },
        // A machine (its greeting, then a beep) is left this message, templated like the greeting.
        machineDetection: "message",
        voicemailMessage: VOICEMAIL,
      });
      patients.set(callId, a);
      console.log(`calling ${a.name} at ${a.phone}: ${callId}`);
      break;
    } catch (err) {
      // Over the bridge's pace (outbound.callsPerSecond, maxConcurrent): wait as told, then again.
      if (!(err instanceof DialError) || err.retryAfterS === undefined || err.status !== 429) throw err;
      await new Promise((r) => setTimeout(r, err.retryAfterS! * 1000));
    }
  }
}

await new Promise<void>((resolve) => {
  allEnded = resolve;
  if ([...patients.keys()].every((id) => ended.has(id))) resolve();
});
console.log(`reminders done: ${patients.size} calls`);
await bridge.close();
