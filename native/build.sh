#!/usr/bin/env bash
# Builds the native pieces into native/build/:
#   sphinx.node       PocketSphinx as a Node-API addon (the decoder stays loaded in-process)
#   espeak-worker     long-lived espeak-ng synthesis worker (a pool of them serves TTS)
#   rtp-sender.node   the SIP calls' RTP send thread (pacing off the event loop)
#   discord-aes-gcm.node  Discord's voice transport encryption (AES-256-GCM, a context per connection)
#   discord-voice-socket.node  a voice socket's queued datagrams read in one recvmmsg per voice tick
#   ws-stamps.node    the benchmarks' simulated Twilio: WebSocket frames read with their kernel receive stamps
#   webrtc-ns.node    noise suppression of callers' audio (WebRTC's audio processing module), if its -dev is there
# Needs: cc, c++, pkg-config, libpocketsphinx-dev, libsphinxbase-dev, libespeak-ng-dev, libsrtp2-dev,
# libwebrtc-audio-processing-dev (optional), and the
# Node headers (npm_config_nodedir from scripts/env.sh, else the running node's prefix). With
# libsrtp2's source in build/libsrtp2-src (scripts/bootstrap.sh fetches Debian's) and libssl-dev,
# libsrtp2 is built on its OpenSSL backend and linked into rtp-sender.node (see srtp_build below).
# Idempotent: rebuilds only when a source is newer than its output.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/build"
mkdir -p "$OUT"

nodedir="${npm_config_nodedir:-}"
if [ -z "$nodedir" ]; then
  nodedir="$(dirname "$(dirname "$(command -v node)")")"
fi
node_inc="$nodedir/include/node"
[ -f "$node_inc/node_api.h" ] || { echo "native/build.sh: no node_api.h under $node_inc" >&2; exit 1; }

CC="${CC:-cc}"
CFLAGS="-O2 -fPIC -Wall -Wextra -Wno-unused-parameter"

stale() { [ ! -e "$1" ] || [ "$2" -nt "$1" ]; }

if stale "$OUT/sphinx.node" "$HERE/sphinx/addon.c"; then
  # shellcheck disable=SC2046
  $CC $CFLAGS -shared -I"$node_inc" $(pkg-config --cflags pocketsphinx sphinxbase) \
    "$HERE/sphinx/addon.c" -o "$OUT/sphinx.node" $(pkg-config --libs pocketsphinx sphinxbase)
  echo "built native/build/sphinx.node"
fi

# libsrtp2 for the RTP addon. Debian's libsrtp2.so runs its ciphers on NSS, which builds a new
# PKCS#11 AES context for every packet: several µs a packet, SRTP calls cost 44 % more CPU than
# plain ones. The same libsrtp2 source configured with --enable-openssl uses OpenSSL's EVP (AES-NI)
# and costs ~0.7 µs. It is linked statically, its own symbols hidden, and its EVP calls resolve to the
# OpenSSL that Node carries and exports (as node-gyp addons' do), so no second libcrypto is loaded.
SRTP_SRC="$HERE/build/libsrtp2-src"
SRTP_OSSL="$OUT/libsrtp2-openssl"
srtp_build() {
  [ -f "$SRTP_SRC/configure" ] && pkg-config --exists libcrypto || return 1
  if stale "$SRTP_OSSL/lib/libsrtp2.a" "$SRTP_SRC/configure"; then
    local work="$OUT/libsrtp2-work"
    rm -rf "$work" "$SRTP_OSSL"
    cp -r "$SRTP_SRC" "$work"
    (cd "$work" && CFLAGS="-O2 -fPIC" ./configure --prefix="$SRTP_OSSL" --enable-openssl --disable-debug-logging \
      >"$OUT/libsrtp2-build.log" 2>&1 && make libsrtp2.a >>"$OUT/libsrtp2-build.log" 2>&1 &&
      make install >>"$OUT/libsrtp2-build.log" 2>&1) || {
      echo "native/build.sh: libsrtp2 on OpenSSL did not build (native/build/libsrtp2-build.log)" >&2
      rm -rf "$work" "$SRTP_OSSL"
      return 1
    }
    rm -rf "$work"
    echo "built native/build/libsrtp2-openssl (libsrtp2 on its OpenSSL backend)"
  fi
}
if srtp_build; then
  srtp_cflags=(-I"$SRTP_OSSL/include" -DVB_SRTP_CRYPTO='"openssl"')
  srtp_libs=("$SRTP_OSSL/lib/libsrtp2.a" -Wl,--exclude-libs,libsrtp2.a)
  srtp_lib_file="$SRTP_OSSL/lib/libsrtp2.a"
else
  echo "native/build.sh: SRTP uses Debian's libsrtp2 (NSS ciphers, slower): run scripts/bootstrap.sh for its OpenSSL build" >&2
  # shellcheck disable=SC2207
  srtp_cflags=($(pkg-config --cflags libsrtp2) -DVB_SRTP_CRYPTO='"nss"')
  # shellcheck disable=SC2207
  srtp_libs=($(pkg-config --libs libsrtp2))
  srtp_lib_file="$HERE/build.sh"
fi

if stale "$OUT/rtp-sender.node" "$HERE/rtp/sender.c" || stale "$OUT/rtp-sender.node" "$HERE/rtp/srtp.c" ||
  stale "$OUT/rtp-sender.node" "$HERE/rtp/srtp-session.h" || stale "$OUT/rtp-sender.node" "$srtp_lib_file" ||
  stale "$OUT/rtp-sender.node" "$HERE/monotonic-stamp.h" ||
  ! grep -q "VB_SRTP=${srtp_cflags[-1]}" "$OUT/rtp-sender.flags" 2>/dev/null; then
  # nodelete: a worker thread that loaded it may exit; the send thread still runs its code.
  $CC $CFLAGS -shared -pthread -Wl,-z,nodelete -I"$node_inc" "${srtp_cflags[@]}" \
    "$HERE/rtp/sender.c" "$HERE/rtp/srtp.c" -o "$OUT/rtp-sender.node" "${srtp_libs[@]}"
  echo "VB_SRTP=${srtp_cflags[-1]}" >"$OUT/rtp-sender.flags"
  echo "built native/build/rtp-sender.node (SRTP ciphers: ${srtp_cflags[-1]#-DVB_SRTP_CRYPTO=})"
fi

# OpenSSL's headers from Node's own include tree: the EVP calls resolve to the OpenSSL Node exports.
if stale "$OUT/discord-aes-gcm.node" "$HERE/discord/aes-gcm.c"; then
  $CC $CFLAGS -shared -I"$node_inc" "$HERE/discord/aes-gcm.c" -o "$OUT/discord-aes-gcm.node"
  echo "built native/build/discord-aes-gcm.node"
fi

if stale "$OUT/discord-voice-socket.node" "$HERE/discord/voice-socket.c"; then
  $CC $CFLAGS -shared -I"$node_inc" "$HERE/discord/voice-socket.c" -o "$OUT/discord-voice-socket.node"
  echo "built native/build/discord-voice-socket.node"
fi

if stale "$OUT/ws-stamps.node" "$HERE/bench/ws-stamps.c" || stale "$OUT/ws-stamps.node" "$HERE/monotonic-stamp.h"; then
  $CC $CFLAGS -shared -pthread -I"$node_inc" "$HERE/bench/ws-stamps.c" -o "$OUT/ws-stamps.node"
  echo "built native/build/ws-stamps.node"
fi

# Noise suppression on Debian's libwebrtc-audio-processing (C++): optional, skipped without it.
if pkg-config --exists webrtc-audio-processing; then
  if stale "$OUT/webrtc-ns.node" "$HERE/webrtc/ns.cc"; then
    # shellcheck disable=SC2046
    ${CXX:-c++} $CFLAGS -shared -I"$node_inc" $(pkg-config --cflags webrtc-audio-processing) \
      "$HERE/webrtc/ns.cc" -o "$OUT/webrtc-ns.node" $(pkg-config --libs webrtc-audio-processing)
    echo "built native/build/webrtc-ns.node"
  fi
else
  echo "native/build.sh: no libwebrtc-audio-processing-dev: noise suppression (agent.noiseSuppression) unavailable" >&2
fi

if stale "$OUT/espeak-worker" "$HERE/espeak/worker.c"; then
  $CC $CFLAGS "$HERE/espeak/worker.c" -o "$OUT/espeak-worker" -lespeak-ng
  echo "built native/build/espeak-worker"
fi
