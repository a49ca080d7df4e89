"""YAML never builds Python objects: `!!python/...` tags (and any other tag) in config.yaml, a plan file or
state.md are refused with one line, and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import about_files

from .helpers import config_yaml, init_workbench, marker, one_line, plan, wb

TAGS = [
    "!!python/object/apply:os.system ['touch {m}']",
    "!!python/object/apply:subprocess.check_call [['touch', '{m}']]",
    "!!python/object/new:subprocess.Popen [['touch', '{m}']]",
    "!!python/name:os.system",
    "!!python/module:os",
    "!!python/object:pathlib.Path {{}}",
    "!!binary dG91Y2g=",
    "!custom 'touch {m}'",
]


@pytest.mark.parametrize("tag", TAGS)
def test_loaders_return_plain_data_or_refuse(tag: str) -> None:
    from workbench.errors import Refused
    from workbench.model import yamlio

    owned = marker()
    text = f"key: {tag.format(m=owned)}\n"
    for load in (yamlio.load_safe, yamlio.load_round_trip):
        with pytest.raises(Refused):
            load(text, "file.yaml")
    assert not owned.exists()


@pytest.mark.parametrize("tag", TAGS)
def test_config_yaml_tag_is_refused_in_process(tmp_path: Path, tag: str) -> None:
    from workbench.errors import Refused
    from workbench.store.config import load_config

    owned = marker()
    path = tmp_path / "config.yaml"
    path.write_text(config_yaml(extra=f"lock_timeout: {tag.format(m=owned)}\n"))
    with pytest.raises(Refused, match="config.yaml"):
        load_config(path)
    assert not owned.exists()


@pytest.mark.parametrize("tag", TAGS[:2])
def test_config_yaml_tag_is_refused(repo: Path, tag: str) -> None:
    owned = marker()
    init_workbench(repo, config_yaml(extra=f"lock_timeout: {tag.format(m=owned)}\n"))
    name = plan(repo, [{"description": "d"}])
    for args in (["note", "x"], ["run", "g", "--plan", name], ["validate"]):
        line = one_line(wb(repo, *args), 5)
        assert "config.yaml" in line
    assert not owned.exists()


@pytest.mark.parametrize("tag", TAGS[:2])
def test_plan_file_tag_is_refused(repo: Path, tag: str) -> None:
    owned = marker()
    init_workbench(repo, config_yaml())
    (repo / "plan.yaml").write_text(f"steps:\n  - description: {tag.format(m=owned)}\n")
    line = one_line(wb(repo, "run", "goal", "--plan", "plan.yaml"), 5)
    assert "plan.yaml" in line
    assert not owned.exists()


@about_files  # state.md edited by hand
@pytest.mark.parametrize("tag", TAGS[:2])
def test_state_md_tag_is_refused(repo: Path, tag: str) -> None:
    from tests.conftest import hash_workbench

    owned = marker()
    init_workbench(repo, config_yaml())
    state = repo / ".workbench" / "state.md"
    state.write_text(state.read_text().replace("next_action: ", f"next_action: {tag.format(m=owned)} #", 1))
    before = hash_workbench(repo)
    for args in (["status"], ["note", "x"], ["task", "add", "t"]):
        line = one_line(wb(repo, *args), 5)
        assert "state.md" in line
    assert hash_workbench(repo) == before
    assert not owned.exists()


def test_aliases_cannot_blow_up(repo: Path) -> None:
    """A "billion laughs" config is refused quickly, not expanded."""
    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10))
    init_workbench(repo, config_yaml(extra="tools:\n  t: {argv: [x]}\n").replace("tools: {}\n", "") + laughs)
    line = one_line(wb(repo, "note", "x", timeout=30), 5)
    assert "aliases" in line or "config.yaml" in line
