// One SIP load-generator process for a `calls --transport sip` benchmark: its share of the calls
// (sip-load.ts), its own CPU and loop delay over the window (load-window.ts), one JSON report.
//
// Usage: node calls-load-sip.ts SPEC.json OUT.json   (SPEC: a SipLoadSpec)
import { readFileSync, writeFileSync } from "node:fs";
import { measureLoad } from "./load-window.ts";
import { runSipCalls, type SipLoadSpec } from "./sip-load.ts";

const [specPath, outPath] = process.argv.slice(2);
if (!specPath || !outPath) throw new Error("usage: calls-load-sip.ts SPEC.json OUT.json");
const spec = JSON.parse(readFileSync(specPath, "utf8")) as SipLoadSpec;
const raw = readFileSync(spec.timelinePath);
const caller = new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength >> 1);
const report = await measureLoad(spec.windowMs, () => runSipCalls(spec, caller));
writeFileSync(outPath, JSON.stringify(report));
