#!/usr/bin/env bash
# Installs the real agent clients the `clients` test tier drives (tests/clients/):
#   Node >= 22 (npm's `node` package unless the system's is new enough), @anthropic-ai/claude-code,
#   @openai/codex and @modelcontextprotocol/inspector, into one prefix outside the repository:
#   $WB_CLIENTS_PREFIX, by default ${XDG_CACHE_HOME:-$HOME/.cache}/wb-clients.
# Idempotent: what is there already is kept (WB_CLIENTS_UPDATE=1 installs the newest again).
# Always exits 0. On success the last line is `clients: ready <prefix>`; when something cannot be
# installed (no network, no npm) it is `clients: unavailable: <reason>`, and the tier skips with that reason
# (tests/clients/conftest.py reads <prefix>/status).
set -uo pipefail
prefix="${WB_CLIENTS_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/wb-clients}"
mkdir -p "$prefix" || { echo "clients: unavailable: cannot create $prefix"; exit 0; }
status="$prefix/status"
log="$prefix/install.log"
: > "$log"

unavailable() {
  echo "unavailable: $1" > "$status"
  echo "clients: unavailable: $1"
  exit 0
}

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

command -v npm > /dev/null || unavailable "npm is not installed (apt-get install npm, or Node from nodejs.org)"

# 1. Node >= 22: the system's if new enough, else npm's `node` package (a prebuilt binary) in the prefix.
node_bin=""
if [ -x "$prefix/bin/node" ] && [ "$(node_major "$prefix/bin/node")" -ge 22 ]; then
  node_bin="$prefix/bin/node"
elif command -v node > /dev/null && [ "$(node_major node)" -ge 22 ]; then
  node_bin="$(command -v node)"
else
  echo "clients: installing node@22 from npm into $prefix (system node: $(node --version 2>/dev/null || echo none))"
  npm install -g --prefix "$prefix" --no-fund --no-audit node@22 >> "$log" 2>&1 \
    || unavailable "npm install node@22 failed: $(tail -n 1 "$log")"
  node_bin="$prefix/bin/node"
  [ "$(node_major "$node_bin")" -ge 22 ] || unavailable "node@22 from npm does not run here: $("$node_bin" --version 2>&1 | tail -n 1)"
fi
export PATH="$prefix/bin:$(dirname "$node_bin"):$PATH"

# 2. The clients, with that Node first on PATH (their launchers run `#!/usr/bin/env node`).
for pkg in @anthropic-ai/claude-code @openai/codex @modelcontextprotocol/inspector; do
  if [ -d "$prefix/lib/node_modules/$pkg" ] && [ "${WB_CLIENTS_UPDATE:-0}" != 1 ]; then
    continue
  fi
  echo "clients: installing $pkg into $prefix"
  npm install -g --prefix "$prefix" --no-fund --no-audit "$pkg@latest" >> "$log" 2>&1 \
    || unavailable "npm install $pkg failed: $(tail -n 1 "$log")"
done

version() { node -p "require('$prefix/lib/node_modules/$1/package.json').version" 2>/dev/null || echo '?'; }
for bin in claude codex mcp-inspector; do
  [ -x "$prefix/bin/$bin" ] || unavailable "$bin is missing from $prefix/bin after the install"
done
echo "clients: node $("$node_bin" --version) ($node_bin)"
echo "clients: @anthropic-ai/claude-code $(version @anthropic-ai/claude-code), @openai/codex $(version @openai/codex), @modelcontextprotocol/inspector $(version @modelcontextprotocol/inspector)"
{ echo "ready"; echo "node=$node_bin"; echo "bin=$prefix/bin"; } > "$status"
echo "clients: ready $prefix"
exit 0
