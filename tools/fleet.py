"""A fleet of agents sharing one board through a git remote: N clones of one bare remote (state on its own ref,
`wb init --ref wb-state`), each driven by its own process — an agent loop doing add / claim / start / done /
note / sync at random for a given time — then a final sync everywhere, and the figures:

    operations        what the agents did, by kind (and what was refused, by exit code)
    claims            claims won, and lost to another agent (exit 6)
    claimed twice     tasks two agents both won while a lease held (must be 0)
    lost events       tasks and notes an agent was told were recorded, missing from a clone's log (must be 0)
    converged         clones whose events.jsonl, board.json and state.md are byte for byte the same (must be all)
    replay --verify   clones where replaying the log reproduces the snapshots (must be all)

    python tools/fleet.py --clones 4 --seconds 60 [--seed 1] [--dir /tmp/fleet] [--json]

Exit 0 when every figure holds. docs/reliability.md has figures from a run; tests/reliability/test_fleet.py runs
a CI-sized one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REF = "wb-state"
GIT_ENV = {"GIT_AUTHOR_NAME": "Fleet", "GIT_AUTHOR_EMAIL": "fleet@example.invalid",
           "GIT_COMMITTER_NAME": "Fleet", "GIT_COMMITTER_EMAIL": "fleet@example.invalid",
           "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
WEIGHTS = {"add": 3, "claim": 4, "start": 2, "done": 2, "note": 2, "sync": 3}


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=_env())
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()}")
    return proc.stdout


def wb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workbench.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, env=_env())


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_ENV)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def setup(base: Path, clones: int) -> list[Path]:
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    first = base / "agent0"
    git(base, "clone", "-q", str(remote), str(first))
    (first / "app.py").write_text("print('the project')\n")
    git(first, "add", "app.py")
    git(first, "commit", "-q", "-m", "the user's first commit")
    git(first, "push", "-q", "origin", "HEAD:main")
    for args in (("init", "--ref", REF), ("sync",)):
        out = wb(first, *args)
        if out.returncode != 0:
            raise SystemExit(f"wb {' '.join(args)}: {out.stderr.strip()}")
    paths = [first]
    for i in range(1, clones):
        path = base / f"agent{i}"
        git(base, "clone", "-q", str(remote), str(path))
        out = wb(path, "init", "--ref", REF)  # joins: takes up the remote's state branch
        if out.returncode != 0:
            raise SystemExit(f"agent{i}: wb init --ref: {out.stderr.strip()}")
        paths.append(path)
    return paths


# -- one agent ------------------------------------------------------------------------------------------------
def agent_loop(path: Path, name: str, seconds: float, seed: int, out: Path) -> None:
    """Random operations through the Python API until the time is up; what it was told is written to `out`."""
    from workbench.api import Bench
    from workbench.errors import WorkbenchError

    rng = random.Random(seed)
    bench = Bench.open(path)
    record: dict[str, Any] = {"agent": name, "ops": {}, "refused": {}, "won": [], "lost": 0, "titles": [],
                              "notes": [], "errors": []}
    kinds = list(WEIGHTS)
    weights = [WEIGHTS[k] for k in kinds]
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        kind = rng.choices(kinds, weights)[0]
        n += 1
        try:
            tasks = bench.list_tasks()
            mine = [t for t in tasks if (t.get("claim") or {}).get("agent") == name
                    and t["status"] in ("todo", "in_progress")]
            if kind == "add":
                title = f"{name} task {n}"
                bench.add_task(title)
                record["titles"].append(title)
            elif kind == "claim":
                open_ = [t for t in tasks if t["status"] in ("todo", "in_progress")]
                if not open_:
                    continue
                target = rng.choice(open_)["id"]
                try:
                    won = bench.claim(target, agent=name)
                    record["won"].append({"id": won["id"], "since": won["since"], "until": won["until"]})
                except WorkbenchError as err:
                    if err.exit_code == 6 and "is claimed by" in str(err):
                        record["lost"] += 1
                    else:
                        raise
            elif kind == "start" and mine:
                bench.start_task(rng.choice(mine)["id"])
            elif kind == "done" and mine:
                bench.done_task(rng.choice(mine)["id"])
            elif kind == "note":
                text = f"{name} note {n}"
                bench.note(text)
                record["notes"].append(text)
            elif kind == "sync":
                bench.sync()
            else:
                continue
            record["ops"][kind] = record["ops"].get(kind, 0) + 1
        except WorkbenchError as err:
            key = f"{kind}:exit {err.exit_code}"
            record["refused"][key] = record["refused"].get(key, 0) + 1
            if err.exit_code not in (5, 6):  # refused by a rule, or busy: an agent's ordinary day
                record["errors"].append(f"{kind}: {err}")
            elif len(record.setdefault("why", [])) < 5:
                record["why"].append(f"{kind}: {err}")
        except Exception as err:  # noqa: BLE001 - a bug: counted and shown, the loop goes on
            record["errors"].append(f"{kind}: {type(err).__name__}: {err}")
    for _ in range(3):  # publish what this agent did before it stops
        try:
            bench.sync()
            break
        except WorkbenchError:
            time.sleep(0.2)
    bench.close()
    out.write_text(json.dumps(record))


# -- the fleet ------------------------------------------------------------------------------------------------
def run(clones: int, seconds: float, seed: int, base: Path) -> dict[str, Any]:
    started = time.monotonic()
    paths = setup(base, clones)
    procs = []
    for i, path in enumerate(paths):
        out = base / f"agent{i}.json"
        procs.append((subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--agent-loop", str(path),
                                        f"agent{i}", str(seconds), str(seed * 1000 + i), str(out)], env=_env()),
                      out))
    for proc, _out in procs:
        proc.wait()
    records = [json.loads(out.read_text()) if out.exists() else {"agent": "?", "errors": ["no record"]}
               for _proc, out in procs]
    for _round in range(2):  # the final sync: every clone takes up what the others published
        for path in paths:
            wb(path, "sync")
    return figures(paths, records, time.monotonic() - started, clones, seconds)


def figures(paths: list[Path], records: list[dict[str, Any]], elapsed: float, clones: int,
            seconds: float) -> dict[str, Any]:
    ops: dict[str, int] = {}
    refused: dict[str, int] = {}
    for r in records:
        for k, v in r.get("ops", {}).items():
            ops[k] = ops.get(k, 0) + v
        for k, v in r.get("refused", {}).items():
            refused[k] = refused.get(k, 0) + v
    first = paths[0] / ".workbench"
    names = ("events.jsonl", "board.json", "state.md")
    converged = sum(all((p / ".workbench" / n).read_bytes() == (first / n).read_bytes() for n in names)
                    for p in paths)
    verified = sum(wb(p, "replay", "--verify").returncode == 0 for p in paths)
    valid = sum(wb(p, "validate").returncode == 0 for p in paths)
    # claimed twice: two agents told they won the same task with overlapping leases
    wins: dict[str, list[tuple[str, str, str]]] = {}
    for r in records:
        for w in r.get("won", []):
            wins.setdefault(w["id"], []).append((w["since"], w["until"], r["agent"]))
    twice = 0
    for spans in wins.values():
        spans.sort()
        if any(a[2] != b[2] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:]):
            twice += 1
    # lost events: what an agent was told was recorded, missing from a clone's log
    lost = 0
    for p in paths:
        log = (p / ".workbench" / "events.jsonl").read_text()
        for r in records:
            lost += sum(1 for text in [*r.get("titles", []), *r.get("notes", [])] if json.dumps(text) not in log)
    board = json.loads((first / "board.json").read_bytes())
    holders = {t["id"]: t["claim"]["agent"] for t in board["tasks"] if "claim" in t}
    last_winner: dict[str, tuple[str, str]] = {}
    for r in records:
        for w in r.get("won", []):
            if w["id"] not in last_winner or w["since"] > last_winner[w["id"]][0]:
                last_winner[w["id"]] = (w["since"], r["agent"])
    wrong_holder = sum(1 for tid, (_s, agent) in last_winner.items() if holders.get(tid) != agent)
    errors = [e for r in records for e in r.get("errors", [])]
    why = sorted({e for r in records for e in r.get("why", [])})
    return {
        "clones": clones, "seconds": seconds, "elapsed_s": round(elapsed, 1),
        "operations": sum(ops.values()), "by_kind": ops, "refused": refused,
        "claims_won": sum(len(r.get("won", [])) for r in records),
        "claims_lost": sum(r.get("lost", 0) for r in records),
        "tasks_claimed_twice": twice, "board_holder_not_the_last_winner": wrong_holder,
        "lost_events": lost, "events": len((first / "events.jsonl").read_bytes().splitlines()),
        "tasks": len(board["tasks"]),
        "converged": converged, "replay_verified": verified, "valid": valid, "errors": errors[:20],
        "refused_why": why[:10],
        "ok": twice == 0 and lost == 0 and converged == clones and verified == clones and valid == clones
              and wrong_holder == 0 and not errors,
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--agent-loop"]:
        path, name, seconds, seed, out = argv[1:6]
        agent_loop(Path(path), name, float(seconds), int(seed), Path(out))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clones", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=None, help="Where the remote and clones go (default: a "
                                                                "temporary directory, removed afterwards).")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.clones < 2:
        parser.error("--clones: at least 2")
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        result = run(args.clones, args.seconds, args.seed, args.dir)
    else:
        with tempfile.TemporaryDirectory(prefix="wb-fleet-") as tmp:
            result = run(args.clones, args.seconds, args.seed, Path(tmp))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"fleet: {result['clones']} clones, {result['seconds']:g} s of agent loops ({result['elapsed_s']} s "
              "in all)")
        print(f"  operations         {result['operations']}  " +
              " · ".join(f"{k} {v}" for k, v in sorted(result["by_kind"].items())))
        if result["refused"]:
            print("  refused            " + " · ".join(f"{k} {v}" for k, v in sorted(result["refused"].items())))
        print(f"  claims             {result['claims_won']} won, {result['claims_lost']} lost to another agent")
        print(f"  claimed twice      {result['tasks_claimed_twice']}  (board holder not the last winner: "
              f"{result['board_holder_not_the_last_winner']})")
        print(f"  lost events        {result['lost_events']}  ({result['events']} events, {result['tasks']} tasks)")
        print(f"  converged          {result['converged']}/{result['clones']}")
        print(f"  replay --verify    {result['replay_verified']}/{result['clones']}  "
              f"(wb validate {result['valid']}/{result['clones']})")
        for e in result["refused_why"]:
            print(f"  refused: {e}")
        for e in result["errors"]:
            print(f"  error: {e}")
        print("ok" if result["ok"] else "FAILED")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
