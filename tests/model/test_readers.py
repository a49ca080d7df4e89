"""One reader per format (issue 10.2): the JSON Lines split, board.json, config.yaml, task ids, the fold from
empty and git's cat-file each have one function, every reader above calls it, and none is written twice."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import Refused
from workbench.model import configfile, ids, jsonl, reducer
from workbench.model.boardfile import BrokenJSON, NotABoard, duplicate_ids, has_task_list, parse_board

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"


def test_split_lines_sets_the_torn_tail_apart() -> None:
    assert jsonl.split_lines(b"") == ([], b"")
    assert jsonl.split_lines(b'{"a":1}\n{"b"') == ([b'{"a":1}'], b'{"b"')
    assert jsonl.split_lines(b"x\n\ny\n") == ([b"x", b"", b"y"], b"")


def test_records_numbers_damaged_lines_and_skips_blank_ones() -> None:
    found, damaged = jsonl.records([b'{"a":1}', b"", b"not json", b"[1]", b'{"b":2}'])
    assert found == [{"a": 1}, {"b": 2}]
    assert damaged == [(3, b"not json"), (4, b"[1]")]
    assert jsonl.records([b'{"a":1}', b'{"b":2}']) == ([{"a": 1}, {"b": 2}], [])


def test_read_line_refuses_naming_file_and_line() -> None:
    assert jsonl.read_line(b'{"seq":1}', "events.jsonl", "line 1") == {"seq": 1}
    with pytest.raises(Refused, match=r"^events\.jsonl: line 2: damaged line \(not JSON\)"):
        jsonl.read_line(b"{", "events.jsonl", "line 2")
    with pytest.raises(Refused, match=r"^calls\.jsonl: line 3: damaged line \(not a JSON object\)"):
        jsonl.read_line(b"[]", "calls.jsonl", "line 3")
    with pytest.raises(Refused, match="lone surrogate"):
        jsonl.read_line(b'{"a":"\\udc00"}', "events.jsonl", "line 4")
    assert jsonl.loads_record(b"[" * 100_000) is None


def test_board_reader() -> None:
    with pytest.raises(BrokenJSON, match=r"^board\.json:2: broken JSON") as err:
        parse_board(b'{"tasks": [\n')
    assert err.value.line == 2
    with pytest.raises(NotABoard):
        parse_board(b"[]")
    assert has_task_list({"tasks": [{"id": "T-001"}]}) and not has_task_list({"tasks": [{"id": 1}]})
    assert has_task_list({}, required=False) and not has_task_list({})
    assert duplicate_ids([{"id": "T-001"}, {"id": "T-002"}, {"id": "T-001"}, 5, {"id": "T-001"}]) == [
        (2, "T-001"), (4, "T-001")]


def test_config_reader() -> None:
    assert configfile.settings(b"# only a comment\n") is None
    assert configfile.settings(b"redact: [A]\n") == {"redact": ["A"]}
    with pytest.raises(Refused, match="not UTF-8"):
        configfile.parse(b"\xff")
    with pytest.raises(Refused, match="mapping of settings"):
        configfile.settings(b"- a\n")


def _ruamel_config(raw: bytes) -> object:
    from workbench.model import yamlio

    loaded = yamlio.load_safe(raw.decode("utf-8"), "config.yaml")
    return yamlio.to_plain(loaded) if loaded is not None else None


def test_config_as_wb_writes_it_is_read_without_ruamel_and_as_ruamel_reads_it() -> None:
    """The first command after a clone parses config.yaml (no cache under the git directory yet): wb init's file,
    and a hand edit in the same style, are read without importing ruamel (~20 ms), to the same data."""
    from workbench.ops.init import CONFIG_TEMPLATE

    edited = CONFIG_TEMPLATE.replace("lock_timeout: 10 ", "lock_timeout: 30 ") + "tools:\n  pytest: auto   # mine\n"
    edited = edited.replace("tools: {}\n", "", 1)
    for text in (CONFIG_TEMPLATE, edited):
        probe = ("import json, sys; from workbench.model import configfile; "
                 f"data = configfile.parse({text.encode()!r}); "
                 "print(json.dumps([data, 'ruamel' in sys.modules]))")
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
        data, ruamel_loaded = json.loads(out)
        assert not ruamel_loaded
        assert data == _ruamel_config(text.encode())
    assert json.loads(out)[0]["tools"] == {"pytest": "auto"}


CONFIG_DOCS = st.builds(
    lambda items: "".join(f"{k}:{v}\n" for k, v in items),
    st.lists(st.tuples(st.sampled_from(["git", "tools", "lock_timeout", "redact", "a_b"]), st.one_of(
        st.sampled_from([" 10", " 1.5", " null", " yes", " {}", " []", " [A]", " {max_turns: 20, x: y}",
                         " every   # c", " 'q''s'", ' "\\u00e9"', "", " 0x1F", " ~", " true"]),
        st.lists(st.sampled_from(["  commit: off", "  ref: wb-state  # r", "  - A", "    deep: 1", "  x:"]),
                 max_size=3).map(lambda lines: "".join("\n" + line for line in lines)))), max_size=6))


@settings(max_examples=300, deadline=None)
@given(CONFIG_DOCS)
def test_config_reader_agrees_with_ruamel_or_refuses_alike(text: str) -> None:
    raw = text.encode()
    try:
        expected = _ruamel_config(raw)
    except Refused:
        with pytest.raises(Refused):
            configfile.parse(raw)
        return
    assert configfile.parse(raw) == expected


def test_task_ids() -> None:
    assert ids.TASK_ID.match("T-001") and not ids.TASK_ID.match("T-01")
    assert [ids.task_number(t) for t in ("T-007", "T-7", "X-1", None)] == [7, 7, 0, 0]


def test_fold_from_empty() -> None:
    assert reducer.fold([]) is None
    init = {"seq": 1, "ts": "2026-12-01T00:00:00.000Z", "type": "workbench.init", "actor": "wb", "session": None,
            "payload": {"next_action": "start"}}
    docs = reducer.fold([init])
    assert docs is not None and docs.state["last_event"] == 1 and docs.state["updated_at"] == init["ts"]
    with pytest.raises(Refused, match=r"events\.jsonl: seq 2 cannot be replayed"):
        reducer.fold([init, {"seq": 2, "ts": init["ts"], "type": "task.start", "payload": {"id": "T-404"}}])


def test_cat_batch(tmp_path: Path) -> None:
    from workbench.git.repo import cat_batch

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a b.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-qm", "x"], check=True)
    found = cat_batch(tmp_path, ["HEAD:a b.txt", "HEAD:no such file", "HEAD^{commit}"])
    assert found[0] is not None and found[0][1] == b"hello\n"
    assert found[1] is None and found[2] is not None
    assert cat_batch(tmp_path, []) == []


@pytest.mark.parametrize(("pattern", "home"), [
    (r"\"cat-file\"", "git/plumbing.py"),
    (r"\bempty_docs\(", "model/reducer.py"),
    (r"TASK_ID = re\.compile", "model/ids.py"),
    (r"yamlio\.load_safe\(", "model/configfile.py|model/statefile.py|harness/planners.py"),
])
def test_each_reader_is_written_once(pattern: str, home: str) -> None:
    where = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                   if "_validators" not in p.parts and re.search(pattern, p.read_text(encoding="utf-8")))
    assert set(where) <= set(home.split("|")), f"{pattern} outside {home}: {where}"


def test_the_duplicate_id_check_is_one_function() -> None:
    """Raised by the write path, reported by validate: each through `duplicate_ids`."""
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "_validators" not in path.parts and "duplicate id " in text:
            assert "duplicate_ids(" in text, f"{path.relative_to(PACKAGE)} checks for duplicate ids its own way"


def test_copied_is_a_deep_copy_of_json_data() -> None:
    data = {"a": [1, {"b": ["c", None, True, 1.5]}], "d": {"e": {}}, "f": "g"}
    copy = jsonl.copied(data)
    assert copy == data
    copy["a"][1]["b"].append("x")
    copy["d"]["e"]["new"] = 1
    assert data == {"a": [1, {"b": ["c", None, True, 1.5]}], "d": {"e": {}}, "f": "g"}
