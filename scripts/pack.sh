#!/usr/bin/env bash
# Makes the npm package: a staging copy of the tracked runtime files, compiled to JS with .d.ts in
# place (tsconfig.build.json), the TypeScript sources left out, then `npm pack`.
#   scripts/pack.sh [OUT_DIR]   (default dist/) prints the tarball's path on its last line.
# Development never needs this: the checkout runs its sources directly.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
cd "$ROOT"

git ls-files -z -- bin app tools src codecs bridges console config native package.json README.md docs \
  tsconfig.json tsconfig.build.json LICENSE 2>/dev/null \
  | xargs -0 cp --parents -t "$STAGE"
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

tarball="$(cd "$STAGE" && npm pack --silent --pack-destination "$OUT" | tail -1)"
echo "$OUT/$tarball"
