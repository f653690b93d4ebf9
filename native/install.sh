#!/bin/sh
# The installed package's `install` script: builds the native pieces (PocketSphinx addon, espeak-ng
# worker, RTP send thread) when a compiler and the libraries are present. Never fails the install:
# without them the bridge still runs on a hosted service (SVC_BASE_URL / SVC_API_KEY), and this says
# which Debian packages bring the embedded engines and SIP.
here="$(cd "$(dirname "$0")" && pwd)"
if sh -c "bash '$here/build.sh'" >"$here/build.log" 2>&1; then
  echo "voice-bridge: native pieces built (embedded speech engines, SIP RTP thread)"
else
  cat >&2 <<MSG
voice-bridge: the native pieces did not build (see $here/build.log).
  The bridge still runs against a hosted service (set SVC_BASE_URL and SVC_API_KEY).
  The embedded local service and SIP need, on Debian/Ubuntu:
    apt-get install gcc make pkg-config libpocketsphinx-dev libsphinxbase-dev libespeak-ng-dev \\
      espeak-ng pocketsphinx pocketsphinx-en-us ffmpeg sox
  then: npm rebuild voice-bridge
MSG
fi
exit 0
