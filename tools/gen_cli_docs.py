"""Regenerate docs/cli.md from the typer app itself (tests/docs/test_cli_docs.py fails when it is stale).

    python tools/gen_cli_docs.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "cli.md"


def commands() -> list[tuple[str, object]]:
    import typer

    from workbench.cli.app import app

    root = typer.main.get_command(app)
    out: list[tuple[str, object]] = []

    def walk(prefix: str, group: object) -> None:
        import click

        assert isinstance(group, click.Group)
        for name in sorted(group.commands):
            cmd = group.commands[name]
            if getattr(cmd, "hidden", False):
                continue
            full = f"{prefix} {name}"
            if isinstance(cmd, click.Group):
                walk(full, cmd)
            else:
                out.append((full, cmd))

    walk("wb", root)
    return out


def render() -> str:
    import click

    lines = ["# Command reference", "",
             "Generated from the app by `python tools/gen_cli_docs.py`; a test fails when it is stale.", "",
             "Global options: `-C PATH` (run as if started in PATH), `--debug` (tracebacks), `--version`.", "",
             "Exit codes: `0` ok · `1` error · `2` usage · `3` yielded (a tool result or an approval is needed) · "
             "`4` paused (budget or hook) · `5` refused (validation, schema version) · `6` busy (lock, "
             "human-edit guard).", ""]
    for name, cmd in commands():
        assert isinstance(cmd, click.Command)
        ctx = click.Context(cmd, info_name=name)
        pieces = cmd.collect_usage_pieces(ctx)
        lines += [f"## `{name}`", "", "```", f"{name} {' '.join(pieces)}".rstrip(), "```", ""]
        lines += [(cmd.help or "").strip(), ""]
        rows = []
        for param in cmd.params:
            if isinstance(param, click.Argument):
                rows.append((f"`{param.human_readable_name}`", getattr(param, "help", "") or ""))
            elif isinstance(param, click.Option) and not param.hidden and param.name != "help":
                flags = ", ".join(f"`{o}`" for o in param.opts)
                if param.metavar:
                    flags += f" {param.metavar}"
                rows.append((flags, param.help or ""))
        if rows:
            lines += ["| argument / option | meaning |", "|---|---|"]
            lines += [f"| {a} | {h.replace('|', '/')} |" for a, h in rows]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print("docs/cli.md is stale: run python tools/gen_cli_docs.py")
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
