#!/usr/bin/env bash
# The image's ffmpeg and ffprobe, built from Debian's own ffmpeg source (its patches applied, the
# newest version the machine's Debian archives carry, security updates included) with what the
# local service asks of them: every demuxer and parser and the audio decoders (uploads decoded to
# PCM, durations read), the mp3 (LAME) and flac encoders, and the filters the conversion needs.
# Debian's binary package brings 199 packages (453 MB: video codecs, X11, Mesa, LLVM) for that.
#   deploy/image/ffmpeg.sh PREFIX      installs PREFIX/bin/ffmpeg and PREFIX/bin/ffprobe, and
#                                      PREFIX/share/doc/ffmpeg/copyright
# Runs as root in a build stage of the Dockerfile: it installs the compilers and headers it needs.
set -euo pipefail
PREFIX="${1:?usage: deploy/image/ffmpeg.sh PREFIX}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-qq -o APT::Sandbox::User=root)

apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --no-install-recommends gcc make pkg-config nasm dpkg-dev \
  libmp3lame-dev zlib1g-dev >/dev/null

# Source indexes for every Debian archive apt already uses (bookworm, its updates, security).
keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=""
[ -f "$keyring" ] && signed="[signed-by=$keyring] "
apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' | sort -u |
  while read -r uri release; do echo "deb-src $signed$uri $release main"; done \
    >/etc/apt/sources.list.d/ffmpeg-src.list
apt-get "${apt_opts[@]}" update

work="$(mktemp -d)"
cd "$work"
apt-get "${apt_opts[@]}" source ffmpeg >/dev/null
cd "$(find . -mindepth 1 -maxdepth 1 -type d -name 'ffmpeg-*' | head -n1)"
debian_version="$(dpkg-parsechangelog -S Version)"

# The audio decoders: allcodecs.c lists them between its "audio codecs" and "subtitles" headings
# (audio, PCM, DPCM, ADPCM); the video ones before, the external libraries after.
audio_decoders="$(sed -n '/^\/\* audio codecs \*\//,/^\/\* subtitles \*\//p' libavcodec/allcodecs.c |
  sed -n 's/^extern const FFCodec ff_\(.*\)_decoder;/\1/p' | paste -sd, -)"
[ -n "$audio_decoders" ] || { echo "ffmpeg.sh: no audio decoders found in libavcodec/allcodecs.c" >&2; exit 1; }

./configure --prefix="$PREFIX" --extra-version="${debian_version#*-}+voice-bridge" \
  --disable-debug --disable-doc --disable-autodetect --disable-network --disable-avdevice \
  --disable-postproc --disable-everything \
  --enable-protocol=file,pipe --enable-demuxers --enable-parsers --enable-bsfs \
  --enable-decoder="$audio_decoders" \
  --enable-libmp3lame --enable-encoder=libmp3lame,flac,pcm_s16le \
  --enable-muxer=mp3,flac,pcm_s16le,wav \
  --enable-filter=aresample,aformat,anull,atrim \
  --enable-zlib >/dev/null
make -j"$(nproc)" >/dev/null 2>"$work/make.log" || { tail -n 40 "$work/make.log" >&2; exit 1; }
install -D -m 755 -t "$PREFIX/bin" ffmpeg ffprobe
# Debian's copyright file for its source, which the image carries (runtime-root.sh).
install -D -m 644 debian/copyright "$PREFIX/share/doc/ffmpeg/copyright"
cd /
rm -rf "$work"

# What src/service asks of them (speech/ffmpeg.ts, media/probe.ts): a second of PCM encoded to mp3
# and flac, each decoded back to PCM, the flac's duration read.
check="$(mktemp -d)"
ff=("$PREFIX/bin/ffmpeg" -hide_banner -loglevel error -nostdin)
head -c 32000 /dev/zero >"$check/in.pcm"
"${ff[@]}" -f s16le -ar 16000 -ac 1 -i "$check/in.pcm" -c:a libmp3lame -b:a 64k -write_xing 0 \
  -id3v2_version 0 -f mp3 "$check/out.mp3"
"${ff[@]}" -f s16le -ar 16000 -ac 1 -i "$check/in.pcm" -c:a flac -compression_level 5 -f flac "$check/out.flac"
for f in "$check/out.mp3" "$check/out.flac"; do
  "${ff[@]}" -i pipe:0 -vn -ac 1 -ar 8000 -f s16le pipe:1 <"$f" >"$check/back.pcm"
  [ -s "$check/back.pcm" ] || { echo "ffmpeg.sh: $f decoded to nothing" >&2; exit 1; }
done
"$PREFIX/bin/ffprobe" -v error -show_entries format=duration -of default=noprint_wrappers=1:nokey=1 \
  "$check/out.flac" | grep -q '^1\.0' || { echo "ffmpeg.sh: ffprobe read no duration of 1 s" >&2; exit 1; }
rm -rf "$check"
"$PREFIX/bin/ffmpeg" -hide_banner -version | head -n1
