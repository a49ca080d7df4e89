"""A fleet of agents sharing one board through a bare remote (tools/fleet.py), CI-sized: 4 clones, each an agent
loop of add / claim / start / done / note / sync for a few seconds, then a final sync — no task claimed twice,
nothing an agent was told was recorded is lost, every clone converges and replays. The long run's figures are
in docs/reliability.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # 13 s of many agents on clones: in the slow step of .ci/run
def test_fleet_ci_sized(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "fleet.py"), "--clones", "4", "--seconds", "5",
                           "--dir", str(tmp_path / "fleet"), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    figures = json.loads(proc.stdout)
    assert figures["tasks_claimed_twice"] == 0, figures
    assert figures["lost_events"] == 0, figures
    assert figures["converged"] == figures["replay_verified"] == figures["valid"] == 4, figures
    assert figures["board_holder_not_the_last_winner"] == 0 and figures["errors"] == [], figures
    assert figures["operations"] >= 8 and figures["claims_won"] >= 1, figures  # the agents really ran
    assert proc.returncode == 0, proc.stderr
