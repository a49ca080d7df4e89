"""The guides run as written, by a person at a terminal, and every link in the docs leads somewhere: the docs
cannot rot.

A guide is a docs/*.md page that says `tests/docs/test_docs_guides.py` runs it (docs/getting-started.md). It is
executed, top to bottom, in a fresh git repository, as a person follows it: each command typed at a terminal
of its own (a pseudo-terminal that is its controlling terminal, tests/person.py), in a person's environment —
no CI, no agent client's markers and no `WB_TRUST_REPO_COMMANDS` opt-in, which the rest of the suite sets. It
follows these conventions, which this module reads:

- A ```sh block holds commands, one per line (a line ending in `\\` continues on the next). They run with
  bash, in order, in the repository. Blank lines and comment lines are skipped, and so are install lines
  (`pip …`, `pipx …`, `python3 -m venv …`, `. …/activate`, `source …`): the test uses the wb of its own
  interpreter, whose bin directory goes first on PATH. `< /dev/null` in a command is what an agent sees (no
  terminal on stdin).
- A command must exit 0 unless its trailing comment says otherwise: `wb task done T-001   # exit 5: why`.
- A command whose trailing comment says "type the code" is a person-only step (`wb trust`): when wb shows its
  four-digit code on the terminal, the code is typed back. Any other command that asks for a code fails the
  guide (it would stop a person who was not told to expect it).
- A ```text block that directly follows a ```sh block (nothing but blank lines between them) is output of
  that block's last command. Each of its non-blank lines must match a line of what the command wrote to the
  terminal, in the same order. Lines may be left out, runs of spaces count as one space, and `…` stands for
  anything.
- Any other fenced block is a file to write when the last line of prose before it ends with
  "Write `PATH`:" (the block becomes the whole file), or with "In `PATH`, replace `OLD` with:" (the one
  occurrence of OLD in the file is replaced by the block, without its last newline).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import files_only_because
from tests.person import as_person

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GUIDE = DOCS / "getting-started.md"
RUNS_ME = "`tests/docs/test_docs_guides.py` runs every"
GUIDES = sorted(p for p in DOCS.glob("*.md") if RUNS_ME in " ".join(p.read_text().split()))

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
EXIT = re.compile(r"\s#\s*exit\s+(\d+)\b")
TYPE_CODE = re.compile(r"\s#.*\btype the code\b")
# what the suite's fixtures set that a person's own shell does not: the CI opt-in to run untrusted commands
NOT_A_PERSONS = ("WB_TRUST_REPO_COMMANDS",)
INSTALL = re.compile(r"^(pip3?|pipx|python3? -m (venv|pip)|\.|source)\s")
WRITE = re.compile(r"[Ww]rite `([^`]+)`:$")
REPLACE = re.compile(r"[Ii]n `([^`]+)`, replace `([^`]+)` with:$")


@dataclass
class Command:
    line: int
    text: str
    exit: int
    expect: list[str] = field(default_factory=list)
    person: bool = False  # a person-only step: the code wb shows is typed back


@dataclass
class FileWrite:
    line: int
    path: str
    content: str
    replace: str | None = None


Step = Command | FileWrite


def parse_guide(text: str) -> list[Step]:
    """The guide as the steps a reader performs: commands to run (with their expected exit and output) and
    files to write, in document order."""
    steps: list[Step] = []
    prev_end, prev_lang = 0, ""
    block_commands: list[Command] = []
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        gap = text[prev_end:m.start()]
        if lang == "sh":
            block_commands = list(_commands(body, line + 1))
            steps.extend(block_commands)
        elif lang == "text" and prev_lang == "sh" and not gap.strip():
            if not block_commands:
                raise ValueError(f"line {line}: output shown for a block whose commands are all skipped")
            block_commands[-1].expect = [ln for ln in body.splitlines() if ln.strip()]
        else:
            prose = gap.strip().splitlines()[-1].strip() if gap.strip() else ""
            if w := WRITE.search(prose):
                steps.append(FileWrite(line, w.group(1), body))
            elif r := REPLACE.search(prose):
                steps.append(FileWrite(line, r.group(1), body.removesuffix("\n"), replace=r.group(2)))
        prev_end, prev_lang = m.end(), lang
    return steps


def _commands(body: str, first_line: int) -> list[Command]:
    out: list[Command] = []
    pending, start = "", first_line
    for n, raw in enumerate(body.splitlines(), first_line):
        if not pending:
            start = n
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        text, pending = (pending + raw).strip(), ""
        if not text or text.startswith("#") or INSTALL.match(text):
            continue
        code = EXIT.search(text)
        out.append(Command(start, text, int(code.group(1)) if code else 0, person=bool(TYPE_CODE.search(text))))
    return out


def _norm(line: str) -> str:
    return " ".join(line.split())


def missing_line(expected: list[str], output: str) -> str | None:
    """The first expected line with no match in `output` (after the previous match), or None."""
    lines = [_norm(ln) for ln in output.splitlines()]
    i = 0
    for want in expected:
        pattern = re.compile(".*".join(re.escape(part.strip()) for part in _norm(want).split("…")))
        while i < len(lines) and not pattern.fullmatch(lines[i]):
            i += 1
        if i == len(lines):
            return want
        i += 1
    return None


def run_guide(steps: list[Step], cwd: Path) -> None:
    """Perform the steps in `cwd` as a person at a terminal; raise AssertionError at the first that does not do
    what the guide says."""
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "wb").exists(), f"no wb script next to {sys.executable}: pip install -e . first"
    env = {k: v for k, v in os.environ.items() if k not in NOT_A_PERSONS}
    env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    env["GIT_PAGER"] = env["PAGER"] = "cat"  # `git log` at a terminal: the whole output, not a pager to quit
    for step in steps:
        if isinstance(step, FileWrite):
            path = cwd / step.path
            if step.replace is None:
                path.write_text(step.content)
                continue
            old = path.read_text()
            assert old.count(step.replace) == 1, f"line {step.line}: `{step.replace}` is not once in {step.path}"
            path.write_text(old.replace(step.replace, step.content))
            continue
        term = as_person(cwd, step.text, argv=["bash", "-c"], env=env, timeout=120,
                         answer="code" if step.person else None)
        output = term.output
        assert not term.asked or step.person, \
            f"line {step.line}: `{step.text}` asked for a code, and the guide does not say to type one:\n{output}"
        assert term.asked or not step.person, \
            f"line {step.line}: `{step.text}` asked for no code, and the guide says to type one:\n{output}"
        assert term.returncode == step.exit, \
            f"line {step.line}: `{step.text}` exited {term.returncode}, the guide says {step.exit}:\n{output}"
        if (want := missing_line(step.expect, output)) is not None:
            raise AssertionError(f"line {step.line}: `{step.text}` printed no line like {want!r}:\n{output}")


@files_only_because("the guides as written: they show the git commits wb makes")
@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.name)
def test_the_guide_runs_as_written_by_a_person(repo: Path, guide: Path) -> None:
    assert os.environ.get("WB_TRUST_REPO_COMMANDS") == "1"  # the suite's opt-in, which run_guide takes away
    run_guide(parse_guide(guide.read_text()), repo)


def test_the_guides_are_found() -> None:
    assert GUIDE in GUIDES


def test_getting_started_walks_through_a_whole_first_session() -> None:
    """The parser found what the guide promises (a renamed fence or marker would silently skip it)."""
    steps = parse_guide(GUIDE.read_text())
    commands = [s for s in steps if isinstance(s, Command)]
    texts = "\n".join(c.text for c in commands)
    for needed in ("wb init", "wb task add", "wb task start", "wb task done", "wb note", "wb set next_action=",
                   "wb status", "wb log", "wb diff", "wb run", "wb resume --approve"):
        assert needed in texts, f"the guide runs no `{needed}`"
    assert {3, 5, 6} <= {c.exit for c in commands}
    assert sum(1 for c in commands if c.expect) >= 10
    files = [s for s in steps if isinstance(s, FileWrite)]
    assert {f.path for f in files} == {"hello.py", ".workbench/config.yaml", "plan.yaml"}
    assert not any("pip" in c.text.split() for c in commands)


GOOD = """Write `a.txt`:

```
x
```

In `a.txt`, replace `x` with:

```
y
```

```sh
grep -q y a.txt
printf 'one\\ntwo  words\\n'
```

```text
one
two … words
```
"""


@pytest.mark.parametrize(("guide", "error"), [
    (GOOD, None),
    (GOOD.replace("grep -q y a.txt", "grep -q x a.txt"), "exited 1, the guide says 0"),
    (GOOD.replace("grep -q y a.txt", "grep -q y a.txt   # exit 1"), "exited 0, the guide says 1"),
    (GOOD.replace("two … words", "three"), "printed no line like 'three'"),
    (GOOD.replace("one\ntwo … words", "two … words\none"), "printed no line like 'one'"),  # in order
])
def test_the_guide_runner_catches_a_wrong_exit_or_output(tmp_path: Path, guide: str, error: str | None) -> None:
    steps = parse_guide(guide)
    assert [type(s).__name__ for s in steps] == ["FileWrite", "FileWrite", "Command", "Command"]
    if error is None:
        run_guide(steps, tmp_path)
        assert (tmp_path / "a.txt").read_text() == "y\n"
    else:
        with pytest.raises(AssertionError, match=re.escape(error)):
            run_guide(steps, tmp_path)


ASKS = ("python3 -c \"import os, sys; t = os.open('/dev/tty', os.O_RDWR); "
        "os.write(t, b'A person confirms by typing 1234: '); sys.exit(0 if os.read(t, 16).strip() == b'1234' else 5)\"")


def test_the_guide_runner_is_a_person_at_a_terminal(tmp_path: Path) -> None:
    """Each command at a terminal of its own, without the suite's opt-in or CI; the code typed back only where
    the guide says to type it."""
    env_checks = ('test -t 0 && test -t 1 && test -z "${WB_TRUST_REPO_COMMANDS:-}" && test -z "${CI:-}"\n'
                  "test -t 0 < /dev/null   # exit 1: an agent's stdin\n")
    run_guide(parse_guide(f"```sh\n{env_checks}```\n"), tmp_path)
    run_guide(parse_guide(f"```sh\n{ASKS}   # at your terminal: type the code it shows\n```\n"), tmp_path)
    with pytest.raises(AssertionError, match="asked for a code, and the guide does not say to type one"):
        run_guide(parse_guide(f"```sh\n{ASKS}   # exit 5\n```\n"), tmp_path)
    with pytest.raises(AssertionError, match="asked for no code, and the guide says to type one"):
        run_guide(parse_guide("```sh\ntrue   # type the code it shows\n```\n"), tmp_path)


# -- links --------------------------------------------------------------------------------------------------
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)


def _prose(text: str) -> str:
    """The text outside code blocks and code spans (a `[x](y)` there is not a link)."""
    return re.sub(r"`[^`\n]*`", "", CODE_FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """The heading anchors GitHub makes for a Markdown file."""
    out: set[str] = set()
    seen: dict[str, int] = {}
    for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", CODE_FENCE.sub("", path.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path: Path) -> list[str]:
    return [t for t in LINK.findall(_prose(path.read_text())) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_and_anchors_resolve(page: Path) -> None:
    for target in links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        assert dest.exists(), f"{page.name}: link to {target}: no such file"
        if anchor and dest.suffix == ".md":
            assert anchor in anchors(dest), f"{page.name}: link to {target}: no such heading"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(ROOT / "README.md")}
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked]
    assert not missing, f"README.md does not link docs/{', docs/'.join(missing)}"


def test_the_link_checker_sees_links_and_headings(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# B\n## In `git diff`: why\n```sh\n# not a heading\n```\n")
    page = tmp_path / "a.md"
    page.write_text("[b](b.md#in-git-diff-why) [web](https://x.invalid) `[code](nope.md)`\n"
                    "```\n[fenced](nope.md)\n```\n")
    assert links(page) == ["b.md#in-git-diff-why"]
    assert anchors(tmp_path / "b.md") == {"b", "in-git-diff-why"}
