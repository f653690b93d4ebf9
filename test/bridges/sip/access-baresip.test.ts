// Digest with a real phone (baresip): with the account's password its call is challenged, answered
// and reaches the bridge; with a wrong one or none it ends at 403 and nothing is allocated.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeWav } from "../../../codecs/wav.ts";
import { Baresip } from "../../helpers/baresip.ts";
import { type ServerRig, startServerRig } from "./server-rig.ts";

let rig: ServerRig | undefined;
let phone: Baresip | undefined;
afterEach(async () => {
  await phone?.stop();
  await rig?.server.close();
  rig = undefined;
  phone = undefined;
});

/** Silence long enough to outlast the call (baresip hangs up when its file ends). */
function silence(seconds: number): string {
  const file = join(mkdtempSync(join(tmpdir(), "vb-wav-")), "silence.wav");
  writeFileSync(file, encodeWav(new Int16Array(seconds * 8000), 8000));
  return file;
}

const USERS = [{ user: "alice", password: "opensesame" }];

describe("baresip and sip.users", () => {
  it("with the password: challenged, then answered; the call reaches the bridge", async () => {
    rig = await startServerRig({ sip: { users: USERS } });
    phone = await Baresip.start({
      codec: "pcmu",
      wav: silence(20),
      user: "alice",
      accountParams: ";auth_pass=opensesame",
    });
    phone.dial(`sip:agent@${rig.target}`);
    await phone.waitFor("CALL_ESTABLISHED");
    expect(rig.server.stats.calls).toBe(1);
    expect(rig.server.stats.refused.unauthenticated).toBe(1);
    expect(rig.made[0]?.info).toMatchObject({ from: "alice", to: "agent" });
    phone.hangUp();
    await phone.waitFor("CALL_CLOSED");
  }, 60_000);

  for (const [label, params, reason] of [
    ["a wrong password", ";auth_pass=guess", "bad_credentials"],
    // baresip answers the challenge with an empty password (403), or gives up on it (401).
    ["no password", "", "unauthenticated"],
  ] as const) {
    it(`with ${label}: the call closes without an answer, no port is opened`, async () => {
      rig = await startServerRig({ sip: { users: USERS } });
      phone = await Baresip.start({ codec: "pcmu", wav: silence(20), user: "alice", accountParams: params });
      phone.dial(`sip:agent@${rig.target}`);
      const closed = await phone.waitFor("CALL_CLOSED");
      expect(String(closed.param)).toMatch(reason === "bad_credentials" ? /403/ : /40[13]/);
      expect(phone.events.some((e) => e.type === "CALL_ESTABLISHED")).toBe(false);
      expect(rig.server.stats.refused[reason]).toBeGreaterThan(0);
      expect(rig.server.stats.calls).toBe(0);
      expect(rig.pool.opened).toBe(0);
    }, 60_000);
  }
});
