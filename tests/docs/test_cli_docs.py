"""The CLI reference is generated from the app and every command has help text: the docs cannot rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import gen_cli_docs  # noqa: E402


def test_cli_reference_is_fresh() -> None:
    assert (ROOT / "docs" / "cli.md").read_text() == gen_cli_docs.render(), \
        "docs/cli.md is stale: run python tools/gen_cli_docs.py"


def test_every_command_has_help_and_is_documented() -> None:
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    for name, cmd in gen_cli_docs.commands():
        assert (getattr(cmd, "help", "") or "").strip(), f"{name} has no help text"
        assert f"`{name}`" in docs, f"{name} is not in docs/"


def test_help_runs_for_every_command() -> None:
    from typer.testing import CliRunner

    from workbench.cli.app import app

    runner = CliRunner()
    for name, _cmd in gen_cli_docs.commands():
        result = runner.invoke(app, [*name.split()[1:], "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Usage" in result.output
    # and once through the real entry point
    proc = subprocess.run([sys.executable, "-m", "workbench.cli.main", "task", "add", "--help"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "Usage" in proc.stdout
