"""Tool outputs fuzzed: binary, huge, invalid UTF-8, NUL bytes, any exit code.

In-process, `ToolBox.run` turns whatever a tool prints into a result that is JSON, valid UTF-8 and a valid
call-journal record, with large streams in artifacts/ (inside .workbench/, sha256 as recorded). Through the
CLI, a session whose tool prints a megabyte of binary finishes and leaves a workbench that validates and
replays.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from .helpers import FUZZ, Sandbox, assert_cli_clean, cli

WRITER = ("import sys; data = open(sys.argv[1], 'rb').read(); sys.stdout.buffer.write(data); "
          "sys.stderr.buffer.write(data[::-1]); sys.exit(int(sys.argv[2]))")

outputs = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"\x00" * 5000, b"\xff\xfe" * 4000, "é".encode() * 3000, b"\r\n" * 3000,
                     b"\x1b[31mred\x1b[0m" * 500, b"{\"json\": true}", b"\xed\xa0\x80"]),
    st.integers(1, 3).map(lambda n: bytes(range(256)) * (n * 40)),
)


@FUZZ
@given(data=outputs, code=st.sampled_from([0, 1, 2, 127, 255]))
def test_tool_output_becomes_a_clean_result(tmp_path_factory: Any, data: bytes, code: int) -> None:
    from workbench.harness.tools import ToolBox
    from workbench.model import schemas

    root = tmp_path_factory.mktemp("tool")
    artifacts = root / ".workbench" / "artifacts"
    artifacts.parent.mkdir()
    (root / "out.bin").write_bytes(data)
    box = ToolBox({"t": {"argv": [sys.executable, "-c", WRITER, "out.bin", str(code)]}}, root, artifacts)
    spec = box.spec("t")
    assert spec is not None
    result = box.run(spec, {}, "S1:s1:1")
    assert result["exit_code"] == code
    text = json.dumps(result, ensure_ascii=False)
    text.encode("utf-8")  # strict: no lone surrogate reaches a file
    record = {"schema_version": 1, "key": "S1:s1:1", "session": "S1", "step": "s1", "attempt": 1, "tool": "t",
              "status": "done", "ts": "2026-01-01T00:00:00.000Z", "result": result, "error": None}
    schemas.check("call", record, "calls.jsonl")
    for stream in ("stdout", "stderr"):
        art = result.get(f"{stream}_artifact")
        if art:
            path = (root / art["path"]).resolve()
            assert path.is_relative_to(artifacts.resolve())
            assert hashlib.sha256(path.read_bytes()).hexdigest() == art["sha256"]


def test_a_megabyte_of_binary_through_the_cli(sandbox: Sandbox) -> None:
    (sandbox.root / "out.bin").write_bytes(bytes(range(256)) * 4096 + b"\x00\xff\xfe")
    config = sandbox.path("config.yaml")
    config.write_text(config.read_text().replace(
        "tools: {}", "tools:\n  dump: {argv: " + json.dumps([sys.executable, "-c", WRITER, "out.bin", "3"])
        + ", mode: safe_readonly, on_error: continue}"))  # it exits 3: a failure the session goes on past
    (sandbox.root / "plan.json").write_text(json.dumps({"steps": [{"description": "dump", "tool": "dump"}]}))
    proc = cli(sandbox.root, "run", "dump binary", "--plan", "plan.json")
    assert_cli_clean(proc)
    assert proc.returncode == 0, proc.stderr
    for args in (["validate"], ["replay", "--verify"], ["log", "--json"], ["status"], ["diff"]):
        assert_cli_clean(cli(sandbox.root, *args))
    arts = [p for p in Path(sandbox.path("artifacts")).iterdir() if p.name != ".gitkeep"]
    assert len(arts) == 2 and all(p.stat().st_size > 1_000_000 for p in arts)
