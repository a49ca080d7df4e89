"""state.md fuzzed: broken YAML, wrong types, huge values, binary, BOM, CRLF, missing or doubled `---`.

Every variant is loaded, validated, shown and written to in-process (`exercise`): a clean success or one
exit-5 refusal, never another exception, and a refused write leaves the files unchanged. A few variants go
through the real command line too.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from .helpers import FEW, FUZZ, Sandbox, assert_cli_clean, cli, exercise, yaml_fragments

PYTHON_TAG = "!!python/object/apply:os.system ['touch /tmp/wb_fuzz_owned']"
KEYS = ["schema_version", "status", "updated_at", "active_task_id", "next_action", "touched_files", "assumptions",
        "blockers", "counters", "last_event", "session", "hooks", "tools", "planner", "extra", "tasks_completed"]


def _lines(base: bytes) -> list[str]:
    return base.decode("utf-8").split("\n")


@st.composite
def state_variants(draw: st.DrawFn, base: bytes, big: bool = True) -> bytes:
    lines = _lines(base)
    closing = lines.index("---", 1)
    front = list(range(1, closing))
    kind = draw(st.sampled_from(["value", "value", "add_key", "drop_line", "delims", "encoding", "bytes",
                                 "binary", "text", "huge", "indent"]))
    if kind == "value":
        i = draw(st.sampled_from([i for i in front if re.match(r"^ *\w+:", lines[i])]))
        key = lines[i].split(":", 1)[0]
        lines[i] = f"{key}: {draw(yaml_fragments)}"
    elif kind == "add_key":
        i = draw(st.sampled_from(front))
        lines.insert(i, f"{draw(st.sampled_from(KEYS))}: {draw(yaml_fragments)}")
    elif kind == "drop_line":
        del lines[draw(st.sampled_from(front))]
    elif kind == "indent":
        i = draw(st.sampled_from(front))
        lines[i] = draw(st.sampled_from(["  ", "\t", "- ", "? ", "# "])) + lines[i]
    elif kind == "delims":
        how = draw(st.sampled_from(["no_open", "no_close", "extra", "double_front", "spaces", "only_delims"]))
        if how == "no_open":
            del lines[0]
        elif how == "no_close":
            del lines[closing]
        elif how == "extra":
            lines.insert(draw(st.integers(0, len(lines))), "---")
        elif how == "double_front":
            lines = lines[: closing + 1] + lines[: closing + 1] + lines[closing + 1:]
        elif how == "spaces":
            lines[0] = " ---"
        else:
            lines = ["---", "---"]
    text = "\n".join(lines)
    data = text.encode("utf-8")
    if kind == "encoding":
        how = draw(st.sampled_from(["bom", "crlf", "cr", "bom_crlf", "latin1", "utf16", "nul"]))
        data = {"bom": b"\xef\xbb\xbf" + data, "crlf": data.replace(b"\n", b"\r\n"),
                "cr": data.replace(b"\n", b"\r"), "bom_crlf": b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"),
                "latin1": data.replace(b"hand-written", "hànd-wrïtten".encode("latin-1")),
                "utf16": text.encode("utf-16"), "nul": data.replace(b"status:", b"sta\x00tus:")}[how]
    elif kind == "bytes":
        pos = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["truncate", "insert", "overwrite"]))
        junk = draw(st.binary(min_size=1, max_size=8))
        if how == "truncate":
            data = data[:pos]
        elif how == "insert":
            data = data[:pos] + junk + data[pos:]
        else:
            data = data[:pos] + junk + data[pos + len(junk):]
    elif kind == "binary":
        data = draw(st.binary(max_size=200))
    elif kind == "text":
        data = ("---\n" + draw(st.text(max_size=200)) + "\n---\n").encode("utf-8", "surrogatepass")
    elif kind == "huge":
        size = draw(st.sampled_from([5000, 50_000] if big else [5000]))
        key = draw(st.sampled_from(["next_action", "blockers", "touched_files", "body"]))
        if key == "next_action":
            data = re.sub(rb"next_action: .*", b"next_action: '" + b"x" * size + b"'", data)
        elif key == "body":
            data = data + b"\n" + b"word " * (size // 5)
        else:
            items = b", ".join([b"item"] * (size // 6))
            data = re.sub(rb"\n" + key.encode() + rb":[^\n]*(\n  +- [^\n]*)*", b"\n" + key.encode() + b": ["
                          + items + b"]", data)
    return data


@FUZZ
@given(data=st.data())
def test_fuzzed_state_md_is_refused_or_read(sandbox: Sandbox, data: st.DataObject) -> None:
    sandbox.reset()
    sandbox.write("state.md", data.draw(state_variants(sandbox.original("state.md"))))
    exercise(sandbox.root)
    assert not Path("/tmp/wb_fuzz_owned").exists()


@FEW
@given(data=st.data())
def test_fuzzed_state_md_through_the_cli(sandbox: Sandbox, data: st.DataObject) -> None:
    sandbox.reset()
    sandbox.write("state.md", data.draw(state_variants(sandbox.original("state.md"), big=False)))
    before = sandbox.hashes()
    for args in (["status"], ["validate"], ["diff"], ["note", "fuzzed"]):
        proc = cli(sandbox.root, *args)
        assert_cli_clean(proc)
        if proc.returncode == 5 and args[0] == "note":
            assert sandbox.hashes() == before


def test_state_md_variants_known_to_matter(sandbox: Sandbox) -> None:
    """Named cases, each checked every run (hypothesis may not draw them)."""
    base = sandbox.original("state.md")
    text = base.decode()
    cases = {
        "bom": b"\xef\xbb\xbf" + base,
        "crlf": base.replace(b"\n", b"\r\n"),
        "no delimiters": text.replace("---\n", "", 2).encode(),
        "no closing": text.replace("\n---\n", "\n", 1).encode() if text.count("\n---\n") else base,
        "doubled": text.replace("---\n", "---\n---\n", 1).encode(),
        "empty": b"",
        "binary": bytes(range(256)),
        "python tag": text.replace("status: ", f"status: {PYTHON_TAG} #", 1).encode(),
        "alias bomb": text.replace("assumptions: []", "assumptions: &a [*a]").encode(),
        "laughs": text.replace("assumptions: []", "assumptions: " + _laughs()).encode(),
        "deep": text.replace("assumptions: []", "assumptions: " + "[" * 5000 + "]" * 5000).encode(),
        "deep block": text.replace("assumptions: []", "assumptions:\n" + "".join(f"{'  ' * i}-\n" for i in range(300)))
        .encode(),
        "lone surrogate": text.replace("next_action: ", 'next_action: "\\udb72" #', 1).encode(),
        "surrogate key": text.replace("session: null", 'session: null\n"\\udc00": 1').encode(),
        "complex key": text.replace("session: null", "session: null\n? [a, b]\n: 1").encode(),
        "custom tag": text.replace("next_action: ", "next_action: !mine ", 1).encode(),
        "timestamp": re.sub(r"updated_at: .*", "updated_at: 2026-01-01 10:00:00", text).encode(),
        "huge int": text.replace("last_event: ", "last_event: 9" + "9" * 400 + " #", 1).encode(),
        "float counter": text.replace("turns: 0", "turns: .nan").encode(),
        "hooks key": text.replace("session: null", "session: null\nhooks: {before_step: [{run: [touch, x]}]}").encode(),
    }
    for name, raw in cases.items():
        sandbox.reset()
        sandbox.write("state.md", raw)
        try:
            exercise(sandbox.root)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None
    assert not Path("/tmp/wb_fuzz_owned").exists()


def _laughs() -> str:
    """A 'billion laughs' YAML value: a few aliases that expand to 10**9 items."""
    parts = ["[&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        parts.append(f", &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]")
    return "".join(parts) + "]"


def test_values_wb_writes_always_read_back(sandbox: Sandbox) -> None:
    """Brackets, quotes, surrogate-free Unicode and long lines that wb itself writes parse again (the YAML
    guards never refuse wb's own output)."""
    import shutil

    from workbench.api import Bench
    from workbench.store.workbench import Workbench

    values = ["x" + "[" * 100, "[" * 100, "{" * 80 + "'\"", "a: b # [[[[", "- [", "é" * 3000, "\u2028\x85\t",
              "it's [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]
    for value in values:
        sandbox.reset()
        Bench(Workbench(sandbox.root)).set_state({"next_action": value, "blockers": [value, value]})
        shutil.rmtree(sandbox.cache_dir)
        loaded = Workbench(sandbox.root).load()
        assert loaded.docs.state["next_action"] == value
        assert exercise(sandbox.root) is None
