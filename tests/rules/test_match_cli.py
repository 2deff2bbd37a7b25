"""The ``match`` and ``check-card`` commands, run as ``python -m companion`` subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(Path(__file__).parent / "data" / "example-card.mjcard")


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "companion", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_match_json_with_exposures() -> None:
    r = _run("match", "--card", EXAMPLE, "--tiles", "F F F 2B 2B 6C 6C",
             "--exposed", "4B 4B J", "--exposed", "8C J 8C 8C", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"matches": [{"hand": "ev1", "value": 25, "jokerless": False}]}


def test_match_readable_table_and_default_card() -> None:
    r = _run("match", "--tiles", "f f f f 1b 1b 1b 1b 9b 9b 9b 9b 5c 5c")
    assert r.returncode == 0, r.stderr
    assert "jk1" in r.stdout and "jokerless" in r.stdout and "Naturals Only" in r.stdout


def test_viability_json_and_dead_rack() -> None:
    r = _run("match", "--card", EXAMPLE, "--exposed", "GD GD GD GD", "--exposed", "4C 4C 4C 4C", "--json")
    assert json.loads(r.stdout) == {"viable": ["rn2"], "dead": False}
    r = _run("match", "--card", EXAMPLE, "--exposed", "N N N", "--json")
    assert json.loads(r.stdout) == {"viable": [], "dead": True}
    r = _run("match", "--card", EXAMPLE, "--exposed", "N N N")
    assert "DEAD" in r.stdout


def test_jsonl_one_result_per_line_errors_inline() -> None:
    lines = [
        json.dumps({"tiles": "1D 1D 3D 3D 5D 5D 7D 7D 9D 9D E E W W"}),
        json.dumps({"exposed": ["8C 8C J"]}),
        "this is not json",
        json.dumps({"tiles": "F F F BK"}),
        json.dumps({"exposed": ["N N N"]}),
    ]
    r = _run("match", "--card", EXAMPLE, "--jsonl", stdin="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    out = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert len(out) == 5
    assert out[0] == {"matches": [{"hand": "sp1", "value": 50, "jokerless": True}]}
    assert out[1] == {"viable": ["ln1", "ln2"], "dead": False}
    assert "not a JSON object" in out[2]["error"]
    assert "face-down" in out[3]["error"]
    assert out[4] == {"viable": [], "dead": True}


def test_nearest() -> None:
    r = _run("match", "--card", EXAMPLE, "--tiles", "F F F 2B 2B 4B 4B 6C 8C 8C J", "--nearest", "2", "--json")
    best = json.loads(r.stdout)["nearest"]
    assert len(best) == 2
    assert best[0] == {"hand": "ev1", "missing": 3, "missing_tiles": ["6C", "8C", "8C"]}


def test_bad_tile_is_an_error_exit_2() -> None:
    r = _run("match", "--card", EXAMPLE, "--tiles", "F F Q9", "--json")
    assert r.returncode == 2 and "error:" in r.stderr and "'Q9'" in r.stderr


def test_check_card_summary() -> None:
    r = _run("check-card", EXAMPLE)
    assert r.returncode == 0, r.stderr
    assert "11 hands" in r.stdout and "303 instances" in r.stdout
    assert "hand qn2 needs at least 4 jokers" in r.stdout
    r = _run("check-card", EXAMPLE, "--json")
    summary = json.loads(r.stdout)
    assert {h["id"]: h["instances"] for h in summary["hands"]}["ln1"] == 54


def test_check_card_reports_every_error_with_position(tmp_path: Path) -> None:
    bad = tmp_path / "broken.mjcard"
    bad.write_text('card "b"\nhand a "A" : FFF 22q 444g 66r 8888r ; exposed ; 25\n'
                   'hand b "B" : FFF 22g 444g 66r 8888r ; open ; 25\n', encoding="utf-8")
    r = _run("check-card", str(bad))
    assert r.returncode == 2
    assert f"{bad}:2:20: unexpected 'q'" in r.stderr
    assert f"{bad}:3:39: expected exposed, concealed, X or C" in r.stderr
    assert "2 error(s)" in r.stderr


def test_check_card_shipped() -> None:
    r = _run("check-card", "calibration/cards/example.mjcard")
    assert r.returncode == 0 and "55 hands" in r.stdout


def test_check_card_canonical_json() -> None:
    r = _run("check-card", EXAMPLE, "--canonical")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [h["id"] for h in data["hands"]][:3] == ["ev1", "ev2", "ln1"]
    assert data["hands"][0]["patterns"][0][0] == {"alts": [{"symbols": ["F", "F", "F"], "colour": None, "nojoker": False}]}
