# Sourced by the Makefile and the bootstrap: puts the project's Node first on PATH when
# there is one, and builds native modules against its headers.
_vb_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
if [ -x "$_vb_root/.tools/node/bin/node" ]; then
  export PATH="$_vb_root/.tools/node/bin:$PATH"
  export npm_config_nodedir="$_vb_root/.tools/node"
fi
unset _vb_root
