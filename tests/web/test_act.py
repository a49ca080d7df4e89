"""Acting from the page (issue 32): a person starts `wb serve --act` at their own terminal (tests/person.py: a
real pseudo-terminal that is wb's controlling terminal, the code typed back), opens the one-time link shown
there, and approves a yield, trusts commands, adds, edits and comments on tasks — each event `via: web`,
`proof: web-token`. Everyone else is refused before the workbench is read: no session cookie, a wrong CSRF
token, another Host or Origin, the link used twice; `wb serve --act` in an agent's environment is one line,
exit 5; plain `wb serve` answers every POST with 405 and one line (docs/views.md, docs/security.md)."""

from __future__ import annotations

import http.client
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WB_ARGV, hash_workbench, run_wb
from tests.person import PersonAtTerminal, as_person

from .conftest import Served
from .test_views import AXE  # read at import, before the suite's isolated HOME is in place


class Page:
    """A person's browser on a `wb serve --act` page: its cookie once the link is opened, its CSRF token."""

    def __init__(self, term: PersonAtTerminal, repo: Path) -> None:
        self.term, self.repo = term, repo
        self.port = int(term.expect(rb"wb serve: http://127\.0\.0\.1:(\d+)/ \(acting").group(1))
        self.link = term.expect(rb"(/act\?token=[A-Za-z0-9_-]+)").group(1).decode()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.cookie: str | None = None
        self.csrf: str | None = None

    def request(self, path: str, *, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None,
                host: str | None = None) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            sent = {"Host": host if host is not None else f"127.0.0.1:{self.port}"}
            data = json.dumps(body).encode() if body is not None else b""
            if method == "POST":
                sent.update({"Origin": self.origin, "Content-Type": "application/json",
                             "Content-Length": str(len(data))})
                if self.csrf:
                    sent["X-CSRF-Token"] = self.csrf
            if self.cookie:
                sent["Cookie"] = self.cookie
            sent.update(headers or {})
            for name, value in sent.items():
                if value is not None:
                    conn.putheader(name, value)
            conn.endheaders(data or None)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def open_link(self) -> dict[str, Any]:
        status, headers, _ = self.request(self.link)
        assert status == 303 and headers["location"] == "/", (status, headers)
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
        self.cookie = cookie.split(";")[0]
        act = self.act()
        self.csrf = act["csrf"]
        return act

    def act(self) -> dict[str, Any]:
        status, _h, body = self.request("/api/act")
        assert status == 200, (status, body)
        data: dict[str, Any] = json.loads(body)["data"]
        return data

    def post(self, action: str, body: Any, expect: int = 200, **kw: Any) -> dict[str, Any]:
        status, _h, raw = self.request(f"/api/act/{action}", method="POST", body=body, **kw)
        assert status == expect, (action, status, raw)
        answer: dict[str, Any] = json.loads(raw)
        return answer


@pytest.fixture
def page_of_person(seeded: Path) -> Iterator[Page]:
    term = PersonAtTerminal(seeded, "serve", "--port", "0", "--act")
    try:
        yield Page(term, seeded)
    finally:
        term.stop()


def events(repo: Path, type_: str) -> list[dict[str, Any]]:
    out = run_wb(repo, "log", "--json", "--type", type_)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    found: list[dict[str, Any]] = data["events"] if isinstance(data, dict) else data
    return found


def approval_yield(repo: Path) -> None:
    """A harness session waiting for a person to approve `deploy` (a mutating tool wb does not know: approved,
    it waits for the tool's result from outside, so nothing runs in the server)."""
    (repo / "plan.json").write_text(json.dumps({"steps": [
        {"id": "deploy", "description": "deploy", "tool": "deploy", "mode": "mutating"}]}))
    first = run_wb(repo, "run", "ship", "--plan", "plan.json", "--json", env={**os.environ, "CI": "1"})
    assert first.returncode == 3 and json.loads(first.stdout)["kind"] == "approval", (first.stdout, first.stderr)


def test_a_person_approves_a_yield_from_the_page_and_the_event_says_web(page_of_person: Page) -> None:
    repo = page_of_person.repo
    approval_yield(repo)
    assert page_of_person.term.text.count("act?token=") == 1  # the link, on the terminal alone
    act = page_of_person.open_link()
    assert act["on"] is True and act["approval"]["tool"] == "deploy", act
    done = page_of_person.post("approve", {"yield_id": act["approval"]["yield_id"]})
    assert done["data"] == {"done": "approved", "session": "tool_result"}, done
    granted = events(repo, "approval.granted")
    assert [(e["actor"], e["via"], e.get("proof"), e["payload"]["by"]) for e in granted] == [
        ("human", "web", "web-token", "human")], granted
    log = run_wb(repo, "log", "--type", "approval.granted").stdout
    assert "proven by the page's one-time token" in log, log
    status = json.loads(run_wb(repo, "status", "--json").stdout)
    assert status["pending"]["kind"] == "tool_result", status["pending"]  # resumable, as after `--approve`
    assert run_wb(repo, "resume", "--result", "{}", "--json").returncode == 0
    # an answered yield is not answered twice
    again = page_of_person.post("deny", {"yield_id": act["approval"]["yield_id"]}, expect=409)
    assert "not the one waiting" in again["error"], again


def test_a_person_denies_trusts_adds_edits_and_comments_from_the_page(page_of_person: Page) -> None:
    repo = page_of_person.repo
    approval_yield(repo)
    config = repo / ".workbench" / "config.yaml"
    config.write_text(config.read_text().replace(  # a hand edit: pending `wb trust`
        "tools: {}", "tools: {lint: {argv: [python3, -c, pass], mode: safe_readonly}}"))
    act = page_of_person.open_link()
    assert [c["label"] for c in act["trust"]] == ["config.yaml tool 'lint'"], act["trust"]
    assert page_of_person.post("deny", {"yield_id": act["approval"]["yield_id"]})["data"]["done"] == "denied"
    trusted = page_of_person.post("trust", {"digests": [c["digest"] for c in act["trust"]]})
    assert trusted["data"] == {"done": "trusted", "count": 1}, trusted
    assert json.loads(run_wb(repo, "trust", "--list", "--json").stdout)["pending"] == []
    added = page_of_person.post("task-add", {"title": "Write the changelog", "acceptance": ["true"]})["data"]
    page_of_person.post("task-set", {"id": added["task"], "changes": {"title": "Write the CHANGELOG",
                                                                      "priority": 1}})
    page_of_person.post("task-comment", {"id": "T-001", "text": "the parser reads tabs too"})
    shown = json.loads(run_wb(repo, "task", "show", added["task"], "--json").stdout)
    task = shown.get("task", shown)
    assert (task["title"], task["priority"], task["acceptance"]) == ("Write the CHANGELOG", 1, ["true"]), task
    for type_ in ("approval.denied", "task.add", "task.set", "task.comment"):
        evs = events(repo, type_)[-1:]  # the seeded board's own task.add events come before
        assert [(e["actor"], e["via"], e.get("proof")) for e in evs] == [("human", "web", "web-token")], (type_, evs)
    refused = page_of_person.post("task-set", {"id": "T-001", "changes": {"status": "done"}}, expect=400)
    assert refused["ok"] is False, refused  # only the fields the page edits


def test_writes_without_the_session_csrf_host_or_origin_are_refused(page_of_person: Page) -> None:
    repo = page_of_person.repo
    before = hash_workbench(repo)
    body = {"title": "planted"}
    assert page_of_person.post("task-add", body, expect=403)["ok"] is False  # no cookie yet
    assert page_of_person.request("/act?token=wrong")[0] == 403
    page_of_person.open_link()
    status, _h, text = page_of_person.request(page_of_person.link)  # the link is spent
    assert status == 403 and b"used already" in text, text
    page_of_person.post("task-add", body, expect=403, headers={"X-CSRF-Token": "forged"})
    page_of_person.post("task-add", body, expect=403, headers={"X-CSRF-Token": None})
    page_of_person.post("task-add", body, expect=403, headers={"Origin": "http://evil.example"})
    page_of_person.post("task-add", body, expect=403, headers={"Origin": None})
    page_of_person.post("task-add", body, expect=403, headers={"Content-Type": "text/plain"})
    page_of_person.post("task-add", body, expect=403, headers={"Cookie": page_of_person.cookie + "x"})
    assert page_of_person.request("/api/act/task-add", method="POST", body=body,
                                  host=f"evil.example:{page_of_person.port}")[0] == 403
    assert page_of_person.request("/api/act/nothing", method="POST", body=body)[0] == 404
    assert hash_workbench(repo) == before
    page_of_person.cookie, cookie = None, page_of_person.cookie  # another browser, without it, sees acting off
    assert page_of_person.act() == {"on": False}
    page_of_person.cookie = cookie
    assert page_of_person.post("task-add", body)["data"]["done"] == "added"  # the session itself works


def test_act_is_refused_in_an_agents_environment_or_off_a_terminal(seeded: Path) -> None:
    for env in ({**os.environ, "CLAUDECODE": "1"}, {k: v for k, v in os.environ.items() if k != "CI"}):
        proc = run_wb(seeded, "serve", "--port", "0", "--act", env=env)
        line = proc.stderr.strip()
        assert proc.returncode == 5 and len(line.splitlines()) == 1, (proc.returncode, proc.stderr)
        assert "ask a person to run: wb serve --act" in line and "token" not in proc.stdout + line, line
    # at a real terminal too, with an agent's marker in wb's environment: refused without asking
    term = as_person(seeded, "serve", "--port", "0", "--act", argv=["env", "CLAUDECODE=1", *WB_ARGV])
    assert term.returncode == 5 and term.asked == 0, term.output
    assert re.search(r"agent's environment \(CLAUDECODE\).*ask a person to run: wb serve --act", term.output)
    assert "token" not in term.output


def test_act_is_for_this_machine_only(seeded: Path) -> None:
    proc = run_wb(seeded, "serve", "--port", "0", "--act", "--host", "192.0.2.1", "--allow-remote")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "--act serves the page's writes on this machine only" in proc.stderr


def test_a_person_who_does_not_confirm_gets_no_link(seeded: Path) -> None:
    term = as_person(seeded, "serve", "--port", "0", "--act", answer="0000")
    assert term.returncode == 5 and "not confirmed" in term.output and "token" not in term.output, term.output


def test_plain_serve_refuses_every_write_with_one_line(served: Served) -> None:
    before = hash_workbench(served.repo)
    for path in ("/api/act/approve", "/api/act/task-add", "/"):
        status, _h, body = served.request(path, method="POST")
        assert status == 405 and body.decode().count("\n") == 1 and "wb serve --act" in body.decode(), body
    assert served.request("/act?token=anything")[0] == 404
    assert served.api("/api/act")["data"] == {"on": False}
    assert hash_workbench(served.repo) == before


@pytest.mark.browser
def test_in_a_browser_the_person_approves_comments_and_adds_a_task(page_of_person: Page, page: Any) -> None:
    from .conftest import wait_until

    repo = page_of_person.repo
    approval_yield(repo)
    page.goto(page_of_person.origin + "/")  # before the link: the page reads, and offers nothing to do
    page.wait_for_selector("#inbox li[data-kind=approval]")
    assert page.locator("#act-approve, #add-task").count() == 0
    page.goto(page_of_person.origin + page_of_person.link)  # the link from the terminal: the session, then /
    page.wait_for_selector("#act-approve")
    assert "deploy" in page.text_content(".act-approval")
    assert axe_serious(page) == []  # the buttons and forms are labelled, with contrast, at a phone's width too
    page.click("#act-approve")
    page.wait_for_selector("#act-status.ok")
    assert wait_until(lambda: events(repo, "approval.granted"))[0]["via"] == "web"
    page.fill("#add-title", "Added from the page")  # half typed when a write elsewhere redraws the board
    assert run_wb(repo, "task", "add", "Added at the terminal").returncode == 0
    page.wait_for_selector('#board .card[data-id="T-004"]')
    assert page.input_value("#add-title") == "Added from the page"
    page.click("#add-task")
    page.wait_for_selector('#board .card[data-id="T-005"]')
    page.wait_for_function("() => document.querySelector('#add-title').value === ''")  # drawn afresh once sent
    page.click('#board .card[data-id="T-001"]')
    page.wait_for_selector("#comment-text")
    assert axe_serious(page) == []
    page.fill("#comment-text", "looked at it in the browser")
    page.click("#comment-task")
    page.wait_for_selector("#task-act-status.ok, #task-act-status.refused")
    said = page.text_content("#task-act-status")
    assert "refused" not in (page.get_attribute("#task-act-status", "class") or ""), said
    assert "looked at it in the browser" in page.text_content("#drawer")
    comments = events(repo, "task.comment")
    assert [(e["via"], e["proof"]) for e in comments] == [("web", "web-token")], comments
    assert page.errors == []


def test_a_malformed_write_is_refused_in_one_line_and_writes_nothing(page_of_person: Page) -> None:
    page_of_person.open_link()
    before = hash_workbench(page_of_person.repo)
    for body, code in (([1, 2], 400), ({"title": ""}, 400), ({"title": "x" * 10_001}, 400),
                       ({"title": "x", "acceptance": "true"}, 400)):
        answer = page_of_person.post("task-add", body, expect=code)
        assert answer["ok"] is False and "\n" not in answer["error"], answer
    assert page_of_person.post("task-set", {"id": "T-001", "changes": {"priority": "high"}}, expect=400)["ok"] is False
    assert page_of_person.post("task-comment", {"id": "T-999", "text": "hello"}, expect=409)["ok"] is False
    unseen = page_of_person.post("trust", {"digests": ["0" * 64]}, expect=409)  # not one the page showed
    assert "no longer wait for trust as shown" in unseen["error"], unseen
    assert page_of_person.post("approve", {"yield_id": "nope"}, expect=409)["ok"] is False  # no yield waits
    big = {"title": "x" * 70_000}
    assert page_of_person.request("/api/act/task-add", method="POST", body=big)[0] == 413
    status, _h, _b = page_of_person.request("/api/act/task-add", method="POST", body=None,
                                            headers={"Content-Length": "0"})
    assert status == 400
    assert hash_workbench(page_of_person.repo) == before


def axe_serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations at 1,280 and 390 px (none found when it is not installed)."""
    if AXE is None:
        return []
    found: list[str] = []
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.evaluate(AXE)
        found += page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
                               ".filter(v => ['serious', 'critical'].includes(v.impact))"
                               ".map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).slice(0, 3).join(' | '))")
    page.set_viewport_size({"width": 1400, "height": 900})
    return found
