"""Issue 22 §1: `wb task edit ID` opens the task in $EDITOR; a bad value is refused naming file, path and rule,
and the user's edited text is kept (under the git dir, its path printed) and reopened next time: nothing lost."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def editor(tmp_path, name, body):
    """An $EDITOR: a Python script that changes the JSON file it is given."""
    script = tmp_path / f"{name}.py"
    script.write_text("import json, sys\np = sys.argv[1]\nd = json.load(open(p))\n" + body
                      + "\nopen(p, 'w').write(json.dumps(d, indent=2))\n")
    return f"{sys.executable} {script}"


def test_edit_refuses_a_bad_value_keeps_the_text_and_reopens_it(bench, repo, wb, tmp_path, error_line):
    bench.add_task("Lexer")
    env = dict(os.environ)
    env["EDITOR"] = editor(tmp_path, "bad", "d['priority'] = 9\nd['title'] = 'Lexer, table-driven'")
    r = wb(repo, "task", "edit", "T-001", env=env)
    assert r.returncode == 5, r.stdout + r.stderr
    line = error_line(r.stderr)
    assert "priority" in line and "9" in line and "kept in " in line, line
    kept = line.split("kept in ", 1)[1].split()[0].rstrip(";:,)")
    assert json.loads(Path(kept).read_text())["title"] == "Lexer, table-driven"  # the user's text, not lost
    assert json.loads(wb(repo, "task", "show", "T-001", "--json").stdout)["title"] == "Lexer"  # nothing written

    env["EDITOR"] = editor(tmp_path, "fix", "assert d['title'] == 'Lexer, table-driven'\nd['priority'] = 1")
    r = wb(repo, "task", "edit", "T-001", env=env)  # reopens the kept text, the title edit still in it
    assert r.returncode == 0, r.stdout + r.stderr
    task = json.loads(wb(repo, "task", "show", "T-001", "--json").stdout)
    assert task["title"] == "Lexer, table-driven" and task["priority"] == 1
    assert not Path(kept).exists()
    assert wb(repo, "replay", "--verify").returncode == 0
