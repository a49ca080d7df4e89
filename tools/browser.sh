#!/usr/bin/env bash
# Installs what the `browser` test tier (tests/web/test_browser.py, `pytest -m browser`) and bench/run.py's
# `web` group drive: a headless Chromium and Playwright, the Python library that drives it.
#   Chromium: one already on PATH (chromium, chromium-browser, google-chrome), else Debian's `chromium` package
#     through apt-get (as root, or with sudo -n). Playwright's own browser download comes from a CDN, not a
#     package registry: it is not used; Playwright drives this Chromium through `executable_path`.
#   Playwright: `pip install playwright` into the active Python (the `[browser]` extra's requirement).
#   axe-core: `npm install axe-core` into the status file's directory (the accessibility test's checker).
# Idempotent. Always exits 0. On success the last line is `browser: ready <chromium>`; when something cannot
# be installed it is `browser: unavailable: <reason>`, and the tier skips with a reason.
# The status file, ${XDG_CACHE_HOME:-$HOME/.cache}/wb-browser/status, names the Chromium for the tests.
set -uo pipefail
dir="${XDG_CACHE_HOME:-$HOME/.cache}/wb-browser"
mkdir -p "$dir" || { echo "browser: unavailable: cannot create $dir"; exit 0; }
status="$dir/status"
log="$dir/install.log"
: > "$log"
python="${PYTHON:-python}"

unavailable() {
  echo "unavailable: $1" > "$status"
  echo "browser: unavailable: $1"
  exit 0
}

find_chromium() {
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name" > /dev/null; then command -v "$name"; return 0; fi
  done
  return 1
}

# 1. Chromium
chromium="$(find_chromium)"
if [ -z "$chromium" ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then sudo="sudo -n"
  else unavailable "no Chromium, and installing one needs root: apt-get install chromium"; fi
  command -v apt-get > /dev/null || unavailable "no Chromium and no apt-get: install Chromium and set WB_CHROMIUM"
  echo "browser: installing chromium with apt-get"
  $sudo apt-get update -q >> "$log" 2>&1 || unavailable "apt-get update failed: $(tail -n 1 "$log")"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium >> "$log" 2>&1 \
    || unavailable "apt-get install chromium failed: $(tail -n 1 "$log")"
  chromium="$(find_chromium)" || unavailable "chromium is not on PATH after apt-get install"
fi
version="$("$chromium" --headless --no-sandbox --version 2>/dev/null | head -n 1)"
[ -n "$version" ] || unavailable "$chromium does not run here"

# 2. Playwright, in the Python that runs the tests
if ! "$python" -c "import playwright.sync_api" 2> /dev/null; then
  echo "browser: installing playwright with pip"
  "$python" -m pip install -q "playwright>=1.40" >> "$log" 2>&1 \
    || unavailable "pip install playwright failed: $(tail -n 1 "$log")"
fi
"$python" -c "import playwright.sync_api" 2>> "$log" || unavailable "playwright does not import: $(tail -n 1 "$log")"

# 3. axe-core, the accessibility checker tests/web/test_views.py runs in the page: npm's package, into the cache
#    (the test tier's own copy, never shipped with wb); without npm that test skips, saying why.
if [ ! -f "$dir/axe/node_modules/axe-core/axe.min.js" ]; then
  if command -v npm > /dev/null; then
    mkdir -p "$dir/axe"
    (cd "$dir/axe" && npm install --silent --no-audit --no-fund axe-core@4 >> "$log" 2>&1) \
      || echo "browser: npm install axe-core failed (the accessibility test skips): $(tail -n 1 "$log")"
  else
    echo "browser: no npm: the accessibility test skips (install npm, run this again)"
  fi
fi

echo "browser: $version ($chromium)"
{ echo "ready"; echo "chromium=$chromium"; } > "$status"
echo "browser: ready $chromium"
exit 0
