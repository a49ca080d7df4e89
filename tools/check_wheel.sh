#!/usr/bin/env bash
# Install wb non-editably into a fresh venv and run it from outside the source tree: proves the wheel
# carries schemas/, the compiled validators and wb serve's page (workbench/web/static/), and that the README's main command works installed.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q "$src"
cd "$tmp"
WB_SRC="$src" "$tmp/venv/bin/python" - <<'PY'
import os
import tomllib
from importlib import metadata, resources
# the distribution pyproject names (`workbench` on PyPI is another project), with the `wb` command
name = tomllib.load(open(os.path.join(os.environ["WB_SRC"], "pyproject.toml"), "rb"))["project"]["name"]
dist = metadata.distribution(name)
assert [e.value for e in dist.entry_points if e.name == "wb"] == ["workbench.cli.main:main"], dist.entry_points
assert "workbench" not in {d.metadata["Name"] for d in metadata.distributions()}, "installed as 'workbench'"
print(f"distribution {dist.metadata['Name']} {dist.version}: the wb command, the workbench package")
names = sorted(p.name for p in (resources.files("workbench") / "schemas").iterdir())
need = {"board.schema.json", "call.schema.json", "config.schema.json", "event.schema.json",
        "plan.schema.json", "state.schema.json", "diff.schema.json"}
assert need <= set(names), names
print("schemas shipped:", ", ".join(names))
page = sorted(p.name for p in (resources.files("workbench.web") / "static").iterdir())
assert {"index.html", "app.js", "app.css"} <= set(page), page
print("wb serve's page shipped:", ", ".join(page))
PY
mkdir repo && cd repo && git init -q
export GIT_AUTHOR_NAME=ci GIT_AUTHOR_EMAIL=ci@example.invalid GIT_COMMITTER_NAME=ci GIT_COMMITTER_EMAIL=ci@example.invalid
"$tmp/venv/bin/wb" init
"$tmp/venv/bin/wb" task add "packaged install works" --accept true
"$tmp/venv/bin/wb" task done T-001
"$tmp/venv/bin/wb" set blockers=null && { echo "a null list was accepted"; exit 1; } || [ $? -eq 5 ]
"$tmp/venv/bin/wb" validate
"$tmp/venv/bin/wb" replay --verify
test "$(git rev-list --count HEAD)" = 3
echo "packaged install: ok"
