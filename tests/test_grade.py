"""``tacocat-arena grade`` end to end: real bot processes in the sandbox, real games.

Four sample bots through a small test rubric (tests/grade_bots/test_rubric.toml: conformance
10, beats random 20 (8 pairs, score >= 0.6 with 95% confidence), beats greedy 20 (SPRT, 8
games at most), decision time 10 (mean <= 150 ms), no forfeits 10), each with its expected
points; Gradescope's results.json checked field by field against the documented format; a
batch of three with one broken archive, graded once (a module fixture) for greedy's and
random's points, the report page and the batch's own claims; greedy graded alone too, as a
late submission of that batch.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from grade_support import RUBRIC, few_games_rubric  # tests/ (pytest pythonpath)

from tacocat_arena.cli import main
from tacocat_arena.cli.run import verify_any
from tacocat_arena.grade.outputs import VISIBILITIES
from tacocat_arena.launch.package import pack

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BOTS = Path(__file__).parent / "grade_bots"
PACKAGES = {
    "random": ROOT / "example_bots" / "packages" / "python-random",
    "greedy": ROOT / "example_bots" / "packages" / "python-greedy",
    "forfeiter": BOTS / "forfeiter",
    "crasher": BOTS / "crasher",
}
#: The same deals for every test run (a grading run's secret, as --secret-file reads it).
SECRET = "0123456789abcdef0123456789abcdef"


def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


def grade(tmp_path: Path, target: str, *extra: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / "out"
    args = ["grade", target, "--rubric", str(RUBRIC), "--out", str(out)]
    args += ["--secret-file", str(secret_file(tmp_path)), *extra]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads((out / "grade.json").read_text(encoding="utf-8")), result.output


def points(data: dict[str, Any]) -> dict[str, float]:
    return {item["name"]: item["points"] for item in data["items"]}


#: Each sample bot's points, item by item, through the test rubric.
EXPECTED = {
    # greedy beats random (every pair), not itself (an SPRT at score 0.5 is H0's side)
    "greedy": {
        "conformance": 10,
        "beats random": 20,
        "beats greedy": 0,
        "decision time": 10,
        "no forfeits": 10,
    },
    "random": {
        "conformance": 10,
        "beats random": 0,
        "beats greedy": 0,
        "decision time": 10,
        "no forfeits": 10,
    },
    # passes check, then lets its clock run out in every real game
    "forfeiter": {
        "conformance": 10,
        "beats random": 0,
        "beats greedy": 0,
        "decision time": 0,
        "no forfeits": 0,
    },
    "crasher": {
        "conformance": 0,
        "beats random": 0,
        "beats greedy": 0,
        "decision time": 0,
        "no forfeits": 0,
    },
}


@dataclass(frozen=True)
class Batch:
    """A graded batch: its output folder and what the command printed."""

    out: Path
    output: str


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Batch:
    """One batch graded once (with --format gradescope, two students at a time): alice the
    greedy package as a folder, bob the random one as an archive, carol a broken archive.
    Its grades are read by the tests of greedy's and random's points, of the report page and
    of the batch itself (each was a grade of its own, the same games)."""
    tmp_path = tmp_path_factory.mktemp("batch")
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    shutil.copytree(PACKAGES["greedy"], submissions / "alice")
    (submissions / "bob.tar.gz").write_bytes(pack(PACKAGES["random"]))
    (submissions / "carol.zip").write_bytes(b"PK\x03\x04 this is not a zip archive at all")
    out = tmp_path / "batch"
    args = ["grade", "--batch", str(submissions), "--rubric", str(RUBRIC), "--out", str(out)]
    args += [
        "--workers",
        "2",
        "--format",
        "gradescope",
        "--secret-file",
        str(secret_file(tmp_path)),
    ]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return Batch(out, result.output)


def check_points(data: dict[str, Any], bot: str, output: str, student: str) -> None:
    """``bot``'s grade ``data`` has its expected points, and ``output`` says them."""
    expected = EXPECTED[bot]
    assert points(data) == expected, json.dumps(data["items"], indent=1)
    assert data["points"] == sum(expected.values()) and data["max_points"] == 70
    assert f"{student}: {data['points']:g} / 70 points" in output
    items = {item["name"]: item for item in data["items"]}
    if bot == "crasher":
        assert "check" in items["conformance"]["output"]
        assert "crashing_bot: an uncaught error at start-up" in items["conformance"]["output"]
        assert items["beats random"]["output"].startswith("not graded: conformance failed")
        assert items["beats random"]["games"] == 0
    if bot == "forfeiter":
        assert "lost by a forfeit (timeout)" in items["no forfeits"]["output"]
    if bot == "greedy":
        assert items["beats random"]["games"] == 16  # the pairs method plays all its pairs
        assert "95% interval of the score" in items["beats random"]["output"]
        assert "SPRT" in items["beats greedy"]["output"]


@pytest.mark.parametrize("bot", ["forfeiter", "crasher"])
def test_a_sample_bot_gets_its_expected_points(tmp_path: Path, bot: str) -> None:
    """Graded alone (``grade PACKAGE``); greedy and random are graded in the batch below,
    and greedy alone again as its late submission."""
    # The forfeiter loses every game by a timeout whatever their number (each costs its
    # process a 2 s sleep: its 24 games were 16 s of waiting on its clock): 4 games.
    rubric = ("--rubric", str(few_games_rubric(tmp_path))) if bot == "forfeiter" else ()
    data, output = grade(tmp_path, str(PACKAGES[bot]), "--student", bot, *rubric)
    check_points(data, bot, output, bot)


@pytest.mark.parametrize(("bot", "student"), [("greedy", "alice"), ("random", "bob")])
def test_a_sample_bot_graded_in_a_batch_gets_its_expected_points(
    batch: Batch, bot: str, student: str
) -> None:
    data = json.loads((batch.out / student / "grade.json").read_text(encoding="utf-8"))
    check_points(data, bot, batch.output, student)


def test_report_html_links_the_replays_that_decided_each_tier(batch: Batch) -> None:
    out = batch.out / "alice"  # greedy's grade
    data = json.loads((out / "grade.json").read_text(encoding="utf-8"))
    page = (out / "report.html").read_text(encoding="utf-8")
    links = re.findall(r'href="([^"#]+\.html)"', page)
    tier_games = [g for item in data["items"] for g in item["games_played"]]
    assert tier_games and len([link for link in links if "/replays/" in link]) == len(tier_games)
    for link in links:
        assert (out / link).is_file(), link
    assert SECRET not in page
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert_gradescope_results(results)
    assert results["score"] == data["points"] == 50
    assert [t["name"] for t in results["tests"]] == [item["name"] for item in data["items"]]
    assert SECRET not in json.dumps(results) and SECRET not in json.dumps(data)


def assert_gradescope_results(results: dict[str, Any]) -> None:
    """The fields of Gradescope's documented results.json ("Autograder Specifications",
    "Leaderboards"), each with the type the documentation gives it."""
    number = (int, float)
    assert isinstance(results["score"], number)
    assert isinstance(results.get("execution_time", 0), int)
    assert isinstance(results.get("output", ""), str)
    assert results.get("visibility", "visible") in VISIBILITIES
    assert isinstance(results["tests"], list) and results["tests"]
    for test in results["tests"]:
        assert set(test) <= {
            "score",
            "max_score",
            "status",
            "name",
            "name_format",
            "number",
            "output",
            "output_format",
            "tags",
            "visibility",
            "extra_data",
        }
        assert isinstance(test["name"], str) and test["name"]
        assert isinstance(test["score"], number) and isinstance(test["max_score"], number)
        assert 0 <= test["score"] <= test["max_score"]
        assert test["status"] in ("passed", "failed")
        assert isinstance(test["output"], str)
        assert test["visibility"] in VISIBILITIES
    assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]))
    assert isinstance(results["leaderboard"], list) and results["leaderboard"]
    for entry in results["leaderboard"]:
        assert set(entry) <= {"name", "value", "order"}
        assert isinstance(entry["name"], str) and isinstance(entry["value"], (int, float, str))
        assert entry.get("order", "desc") in ("asc", "desc")


def test_a_batch_grades_every_student_on_the_same_deals_and_survives_a_broken_one(
    batch: Batch, tmp_path: Path
) -> None:
    out = batch.out
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert sorted(rows) == ["alice", "bob", "carol"]
    assert (rows["alice"]["points"], rows["bob"]["points"], rows["carol"]["points"]) == (
        "50",
        "30",
        "0",
    )
    assert rows["alice"]["beats random"] == "20" and rows["bob"]["beats random"] == "0"
    assert "package refused" in rows["carol"]["note"]
    verified = verify_any(out)  # every student's grade against its tiers' games, grades.csv
    assert verified.ok and verified.games > 0, verified.problems
    for student in rows:
        assert_gradescope_results(
            json.loads((out / student / "results.json").read_text(encoding="utf-8"))
        )
    page = (out / "class.html").read_text(encoding="utf-8")
    assert all(f'href="{s}/report.html"' in page for s in rows)
    # Fair: alice and bob met the same deals, game by game (the records' seeds).
    alice, bob = (
        json.loads((out / s / "grade.json").read_text(encoding="utf-8")) for s in ("alice", "bob")
    )
    assert alice["secret_id"] == bob["secret_id"]
    for a_item, b_item in zip(alice["items"], bob["items"], strict=True):
        a_seeds = {g["game_id"]: g["seed"] for g in a_item["games_played"]}
        b_seeds = {g["game_id"]: g["seed"] for g in b_item["games_played"]}
        common = a_seeds.keys() & b_seeds.keys()
        assert len(common) == min(len(a_seeds), len(b_seeds))
        assert {k: a_seeds[k] for k in common} == {k: b_seeds[k] for k in common}
        for record_seed in _record_seeds(out / "alice", a_item).items():
            assert record_seed[1] == a_seeds[record_seed[0]]
    assert alice["items"][1]["games_played"], "the tiers were played"
    # A late submission graded with the batch's secret (its folder) meets the same deals.
    late = tmp_path / "late"
    args = ["grade", str(PACKAGES["greedy"]), "--rubric", str(RUBRIC), "--out", str(late)]
    result = CliRunner().invoke(main, [*args, "--secret-file", str(out), "--student", "dave"])
    assert result.exit_code == 0, result.output
    dave = json.loads((late / "grade.json").read_text(encoding="utf-8"))
    check_points(dave, "greedy", result.output, "dave")  # greedy graded alone
    assert dave["secret_id"] == alice["secret_id"]
    played = [
        {g["game_id"]: g["seed"] for g in d["items"][1]["games_played"]} for d in (dave, alice)
    ]
    assert played[0] == played[1] and len(played[0]) == 16
    # The secret stays with the teacher: in secret.txt, in no student's file.
    secret = (out / "secret.txt").read_text(encoding="utf-8").strip()
    for student in rows:
        assert not (out / student / "secret.txt").exists()
        for name in ("grade.json", "results.json", "report.html"):
            assert secret not in (out / student / name).read_text(encoding="utf-8")


def _record_seeds(folder: Path, item: dict[str, Any]) -> dict[str, int]:
    """The seeds the tier's game records hold (games.jsonl), by game id."""
    if not item["folder"]:
        return {}
    seeds = {}
    with open(folder / item["folder"] / "games.jsonl", encoding="utf-8") as handle:
        for line in handle:
            entry = json.loads(line)
            seeds[entry["id"]] = entry["record"]["seed"]
    return seeds


@pytest.mark.parametrize(
    ("build", "why"),
    [("sleep 600", "build: over its time limit of 2 s"), ("false", "exited with code 1")],
)
def test_a_build_that_fails_or_never_ends_fails_conformance(
    tmp_path: Path, build: str, why: str
) -> None:
    package = tmp_path / "slow_build"
    package.mkdir()
    (package / "bot.toml").write_text(
        f'command = "python -m example_bots.random_bot"\nbuild = "{build}"\n', encoding="utf-8"
    )
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(
        RUBRIC.read_text(encoding="utf-8").replace(
            'name = "test rubric"', 'name = "test rubric"\nbuild_timeout = 2'
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["grade", str(package), "--rubric", str(rubric), "--out", str(out), "-q"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads((out / "grade.json").read_text(encoding="utf-8"))
    assert data["points"] == 0
    assert why in data["items"][0]["output"]
    assert all(item["output"].startswith("not graded") for item in data["items"][1:])
