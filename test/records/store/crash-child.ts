// Run by sqlite-store.test.ts as its own process: writes a call's events to the store as a call
// does (no flush), waits `settleMs`, then dies by SIGKILL with one more event just appended.
import { SqliteCallStore } from "../../../src/records/store/sqlite/store.ts";
import { callEvents } from "../../session/call-events.ts";

const [path, settleMs] = [process.argv[2]!, Number(process.argv[3])];
const store = await SqliteCallStore.open({ path, instance: "doomed", onWriteError: () => {} });
const events = callEvents("CA-crash", 3);
for (const e of events.slice(0, -2)) store.append("CA-crash", e);
await new Promise((r) => setTimeout(r, settleMs));
store.append("CA-crash", events.at(-2)!);
process.kill(process.pid, "SIGKILL");
