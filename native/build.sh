#!/usr/bin/env bash
# Builds the native pieces into native/build/:
#   sphinx.node       PocketSphinx as a Node-API addon (the decoder stays loaded in-process)
#   espeak-worker     long-lived espeak-ng synthesis worker (a pool of them serves TTS)
#   rtp-sender.node   the SIP calls' RTP send thread (pacing off the event loop)
# Needs: cc, pkg-config, libpocketsphinx-dev, libsphinxbase-dev, libespeak-ng-dev, libsrtp2-dev, and the
# Node headers (npm_config_nodedir from scripts/env.sh, else the running node's prefix).
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

if stale "$OUT/rtp-sender.node" "$HERE/rtp/sender.c" || stale "$OUT/rtp-sender.node" "$HERE/rtp/srtp.c" ||
  stale "$OUT/rtp-sender.node" "$HERE/rtp/srtp-session.h"; then
  # nodelete: a worker thread that loaded it may exit; the send thread still runs its code.
  # shellcheck disable=SC2046
  $CC $CFLAGS -shared -pthread -Wl,-z,nodelete -I"$node_inc" $(pkg-config --cflags libsrtp2) \
    "$HERE/rtp/sender.c" "$HERE/rtp/srtp.c" -o "$OUT/rtp-sender.node" $(pkg-config --libs libsrtp2)
  echo "built native/build/rtp-sender.node"
fi

if stale "$OUT/espeak-worker" "$HERE/espeak/worker.c"; then
  $CC $CFLAGS "$HERE/espeak/worker.c" -o "$OUT/espeak-worker" -lespeak-ng
  echo "built native/build/espeak-worker"
fi
