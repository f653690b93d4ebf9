// The reminder's agent: Acme Dental's receptionist, calling a patient about an appointment. Who
// and when come in the call's variables ({{var.name}}, {{var.time}}). reminder.ts places the
// calls; reminder.test.yaml tests the agent (`npm test`).
import { defineAgent } from "voice-bridge";

export const reminder = defineAgent({
  greeting:
    "Hello {{var.name}}, this is Acme Dental with a reminder of your appointment {{var.time}}. Will you be able to make it?",
  systemPrompt:
    "You are Acme Dental's receptionist, calling {{var.name}} about their appointment {{var.time}}. " +
    "If they can come, thank them. If not, tell them to call 555 0100 to move it. Keep it short and say goodbye.",
  maxCallSeconds: 180,
});
