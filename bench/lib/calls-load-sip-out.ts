// One load-generator process for `calls --transport sip --outbound`: the callee socket the bridge
// dials (sip-uas.ts), its share of the calls (sip-out-load.ts), its own CPU and loop delay over
// the window (load-window.ts), one JSON report.
//
// Usage: node calls-load-sip-out.ts SPEC.json OUT.json   (SPEC: a SipOutLoadSpec)
import { readFileSync, writeFileSync } from "node:fs";
import { measureLoad } from "./load-window.ts";
import { runOutboundCalls, type SipOutLoadSpec } from "./sip-out-load.ts";
import { BenchUas } from "./sip-uas.ts";

const [specPath, outPath] = process.argv.slice(2);
if (!specPath || !outPath) throw new Error("usage: calls-load-sip-out.ts SPEC.json OUT.json");
const spec = JSON.parse(readFileSync(specPath, "utf8")) as SipOutLoadSpec;
const raw = readFileSync(spec.timelinePath);
const caller = new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength >> 1);
const uas = await BenchUas.listen(spec.uasPort);
const report = await measureLoad(spec.windowMs, () => runOutboundCalls(spec, caller, uas));
await uas.close();
writeFileSync(outPath, JSON.stringify(report));
