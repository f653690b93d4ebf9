#!/usr/bin/env bash
# Gathers under ROOTFS the file tree the image runs, from a build stage that scripts/bootstrap.sh
# --image set up (and deploy/image/ffmpeg.sh's ffmpeg in FFMPEG_DIR): Node, the production
# node_modules, the native pieces, ffmpeg, a shell and coreutils, each with the shared libraries it
# loads (as ldd resolves them, with their symlinks), the speech engines' data, CA certificates and
# the users. No package manager, compiler or header comes along: the image is this tree and the
# project's code (docs/deployment.md).
#   deploy/image/runtime-root.sh ROOTFS [FFMPEG_DIR]     (FFMPEG_DIR: /opt/ffmpeg/bin, its copyright in
#                                                        ../share/doc/ffmpeg; needs binutils)
set -euo pipefail
APP="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:?usage: deploy/image/runtime-root.sh ROOTFS [FFMPEG_DIR]}"
FFMPEG_DIR="${2:-/opt/ffmpeg/bin}"
# shellcheck source=scripts/env.sh
. "$APP/scripts/env.sh"
NODE="$(command -v node)"

log() { printf '[runtime-root] %s\n' "$*"; }

# add PATH…: copies each path into OUT at the same place (a directory with what it holds), and
# every symlink on the way to it (Debian's merged /usr, the alternatives of BLAS and LAPACK).
add() {
  local p dir target
  for p in "$@"; do
    while :; do
      dir="$(cd -P "$(dirname "$p")" && pwd)"
      p="$dir/$(basename "$p")"
      mkdir -p "$OUT$dir"
      if [ -L "$p" ]; then
        cp -P --preserve=all "$p" "$OUT$p"
        target="$(readlink "$p")"
        [[ "$target" == /* ]] || target="$dir/$target"
        p="$target"
      else
        cp -a "$p" "$OUT$dir/"
        break
      fi
    done
  done
}

# add_libs FILE…: the shared libraries each one loads, and the loader; those under APP come with
# the tree they are in. A library ldd cannot find would fail at run time: it fails here instead.
# Files this machine cannot load (other platforms' binaries, static ones) are passed over.
add_libs() {
  local f deps
  for f in "$@"; do
    deps="$(ldd "$f" 2>/dev/null)" || continue
    if grep -q 'not found' <<<"$deps"; then
      echo "runtime-root: $f: $(grep 'not found' <<<"$deps")" >&2
      exit 1
    fi
    awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$deps"
  done | sort -u | grep -v -e "^$APP/" -e "^$OUT/" | while read -r lib; do add "$lib"; done
}

rm -rf "$OUT"
mkdir -p "$OUT"
# Debian's merged /usr: /bin, /lib… are symlinks into /usr, as in the build stage.
for d in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$d" ]; then cp -P "/$d" "$OUT/$d"; fi
done
mkdir -p "$OUT/tmp" "$OUT/app/.tools/node/bin" "$OUT/app/native/build" "$OUT/usr/local/bin"
chmod 1777 "$OUT/tmp"

log "system: bash, sh, coreutils, the users, CA certificates"
mapfile -t programs < <(dpkg -L coreutils | grep -E '^/(usr/)?s?bin/.')
programs+=(/bin/bash /bin/sh /usr/sbin/nologin)
add "${programs[@]}"
add_libs "${programs[@]}"
add /etc/passwd /etc/group /etc/nsswitch.conf /etc/os-release /etc/ld.so.conf /etc/ld.so.conf.d
add /etc/ssl/certs/ca-certificates.crt

log "node $("$NODE" --version) and the production node_modules (no types, maps, sources or docs)"
cp -a "$(readlink -f "$NODE")" "$OUT/app/.tools/node/bin/node"
# Node's release binary carries its symbol table and debug info (18 MB); native addons link against
# its dynamic symbols, which strip keeps.
strip --strip-all "$OUT/app/.tools/node/bin/node"
ln -s /app/.tools/node/bin/node "$OUT/usr/local/bin/node"
add_libs "$NODE"
cp -a "$APP/package.json" "$OUT/app/"
cp -a "$APP/node_modules" "$OUT/app/"
# What Node never loads from node_modules: TypeScript (it refuses to strip types there) and its
# declarations, source maps, C sources and objects left by native builds, and the docs; licences stay.
find "$OUT/app/node_modules" -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' \
  -o -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.o' \
  -o -name '*.a' -o -name '*.gyp' -o -name '*.gypi' -o -name '*.md' -o -name '*.markdown' \) \
  ! -iname 'licen[cs]e*' ! -iname 'notice*' ! -iname 'copying*' -delete
mapfile -t elves < <(find "$OUT/app/node_modules" -type f \( -name '*.node' -o -name '*.so' -o -name '*.so.*' \))
add_libs "${elves[@]}"

log "native pieces, ffmpeg, the speech engines' data"
cp -a "$APP"/native/build/*.node "$APP/native/build/espeak-worker" "$OUT/app/native/build/"
add_libs "$OUT"/app/native/build/*
cp -a "$FFMPEG_DIR/ffmpeg" "$FFMPEG_DIR/ffprobe" "$OUT/usr/local/bin/"
add_libs "$FFMPEG_DIR/ffmpeg" "$FFMPEG_DIR/ffprobe"
mapfile -t speech_data < <(dpkg -L espeak-ng-data pocketsphinx-en-us |
  grep -E '/espeak-ng-data$|^/usr/share/pocketsphinx$')
add "${speech_data[@]}"
ln -s /app/bin/voice-bridge "$OUT/usr/local/bin/voice-bridge"

log "licences: Node's, and the copyright file of each Debian package the tree holds files of"
node_license="$(dirname "$(dirname "$(readlink -f "$NODE")")")/LICENSE"
if [ -f "$node_license" ]; then cp -a "$node_license" "$OUT/app/.tools/node/"; fi
# dpkg lists a package's files as it ships them (/lib/…, /bin/…), the tree holds them under /usr;
# the top-level symlinks (/lib, /bin) are no package's files.
(cd "$OUT" && find . -path ./app -prune -o ! -type d -print | sed 's|^\.||') |
  awk 'NR == FNR { if ($0 ~ /^\/[^/]+\/./) have[$0]; next }
    { p = $0; sub(/^\/(bin|sbin|lib|lib64)\//, "/usr&", p) }
    p in have { f = FILENAME; sub(/.*\//, "", f); sub(/(:[^.]*)?\.list$/, "", f); print f; nextfile }' \
    - /var/lib/dpkg/info/*.list | sort -u | while read -r pkg; do
    if [ -f "/usr/share/doc/$pkg/copyright" ]; then add "/usr/share/doc/$pkg/copyright"; fi
  done
# ffmpeg's, from the Debian source deploy/image/ffmpeg.sh built it from.
mkdir -p "$OUT/usr/share/doc/ffmpeg"
cp "$FFMPEG_DIR/../share/doc/ffmpeg/copyright" "$OUT/usr/share/doc/ffmpeg/copyright"

ldconfig -r "$OUT"
log "$(du -sh "$OUT" | cut -f1) in $OUT"
