#!/usr/bin/env bash
# Makes the npm package: a staging copy of the runtime files (tracked, and new ones git does not
# ignore), compiled to JS with .d.ts in place (tsconfig.build.json), the TypeScript sources left
# out, then `npm pack`.
#   scripts/pack.sh [OUT_DIR]   (default dist/) prints the tarball's path on its last line.
# Development never needs this: the checkout runs its sources directly.
# Publishing: the checkout's package.json stays "private" (npm refuses a stray `npm publish` in it);
# the tarball's manifest is not, so a release is the deliberate `npm publish dist/voice-bridge-*.tgz`.
# The tarball is refused here unless npm packed every file its manifest names (bin, types,
# exports) and LICENSE and CHANGELOG.md; test/package/publish.test.ts runs `npm publish --dry-run`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)"
STAGE="$(mktemp -d)"
PACKED="$(mktemp -d)"
trap 'rm -rf "$STAGE" "$PACKED"' EXIT
cd "$ROOT"

git ls-files -z --cached --others --exclude-standard -- bin app tools src codecs bridges console config \
  native package.json README.md CHANGELOG.md LICENSE docs tsconfig.json tsconfig.build.json \
  | while IFS= read -r -d '' f; do [ ! -e "$f" ] || cp --parents -t "$STAGE" "$f"; done
ln -s "$ROOT/node_modules" "$STAGE/node_modules"

(cd "$STAGE" && "$ROOT/node_modules/.bin/tsc" -p tsconfig.build.json)
find "$STAGE/app" "$STAGE/tools" "$STAGE/src" "$STAGE/codecs" "$STAGE/bridges" -name '*.ts' ! -name '*.d.ts' -delete
rm -f "$STAGE/node_modules" "$STAGE/tsconfig.json" "$STAGE/tsconfig.build.json"

# The published manifest: no development scripts, and the native pieces built at install.
node -e '
  const fs = require("node:fs");
  const file = process.argv[1];
  const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
  delete pkg.private;
  delete pkg.devDependencies;
  pkg.scripts = { install: "sh native/install.sh" };
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$STAGE/package.json"

packed="$(cd "$STAGE" && npm pack --json --pack-destination "$PACKED")"
tarball="$(node -e '
  const [packed, file] = [JSON.parse(process.argv[1])[0], process.argv[2]];
  const pkg = JSON.parse(require("node:fs").readFileSync(file, "utf8"));
  const inside = new Set(packed.files.map((f) => f.path));
  const targets = (v) => (typeof v === "string" ? [v] : Object.values(v ?? {}).flatMap(targets));
  const named = ["LICENSE", "CHANGELOG.md", "README.md", pkg.types, ...targets(pkg.bin), ...targets(pkg.exports)];
  const missing = named.map((f) => f?.replace(/^\.\//, "")).filter((f) => !f || !inside.has(f));
  if (missing.length > 0) {
    console.error(`pack.sh: the package lacks ${missing.join(", ")}`);
    process.exit(1);
  }
  console.log(packed.filename);
' "$packed" "$STAGE/package.json")"
mv "$PACKED/$tarball" "$OUT/"
echo "$OUT/$tarball"
