"""scripts/l2_survival_report.py: the kept share of each chase test, the three laws at the
config's shared L2 capacity (hand-derived), and one-line errors naming the file and field."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.scripts.loader import load_script

MIB = 2**20
H200_SHARED = 30 * MIB  # h200_sxm: 60 MiB L2, shared_capacity_fraction 0.5


def _chase(**extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "tests": {
            "l2_4mib": {"region_bytes": 4 * MIB, "cycles_per_hop_median": 300.0},
            "l2_per_sm": {"region_bytes": 128 * 2**10, "cycles_per_hop_median": 290.0},
            "dram_page_local": {"region_bytes": 2**30, "cycles_per_hop_median": 700.0},
            "survival_one_sm_050": {
                "region_bytes": 30 * MIB,
                "cycles_per_hop_median": 300.0,
                "warm_ctas": 1,
            },
            "survival_one_sm_100": {
                "region_bytes": 60 * MIB,
                "cycles_per_hop_median": 500.0,
                "warm_ctas": 1,
            },
            "survival_all_sms_100": {
                "region_bytes": 60 * MIB,
                "cycles_per_hop_median": 720.0,
                "warm_ctas": 132,
            },
            **extra,
        }
    }


def test_points_and_laws_hand_derived() -> None:
    script = load_script("l2_survival_report")
    found = script.points(_chase(), Path("chase.json"), H200_SHARED)
    # l2_4mib is the hit reference and l2_per_sm not a one-pass probe: neither is a point
    assert [p.test for p in found] == [
        "survival_all_sms_100",
        "survival_one_sm_050",
        "survival_one_sm_100",
    ]
    every, half, whole = found
    assert every.warmed_by == "all SMs" and half.warmed_by == "one SM"
    # kept = (700 - c) / (700 - 300), clamped: 720 cycles is slower than a miss
    assert (half.kept, whole.kept, every.kept) == (1.0, 0.5, 0.0)
    assert half.distance_over_capacity == 1.0 and whole.distance_over_capacity == 2.0
    # S = C: LRU and the ramp keep everything, random replacement e^-1
    assert (half.lru, half.ramp) == (1.0, 1.0)
    assert half.random == pytest.approx(math.exp(-1))
    # S = 2C: nothing under LRU or the ramp, e^-2 under random replacement
    assert (whole.lru, whole.ramp) == (0.0, 0.0)
    assert whole.random == pytest.approx(math.exp(-2))
    means = script.mean_differences(found)
    assert means["lru"] == pytest.approx(0.5 / 3) and means["ramp"] == pytest.approx(0.5 / 3)
    expected_random = (1 - math.exp(-1)) + (0.5 - math.exp(-2)) + math.exp(-2)
    assert means["random"] == pytest.approx(expected_random / 3)


def test_ramp_between_c_and_2c() -> None:
    script = load_script("l2_survival_report")
    laws = script.laws(45 * MIB, H200_SHARED)
    assert laws["ramp"] == pytest.approx(0.5)  # 1 - (45 - 30) / 30
    assert laws["lru"] == 0.0 and laws["random"] == pytest.approx(math.exp(-1.5))


def test_cli_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = load_script("l2_survival_report")
    path = tmp_path / "chase.json"
    path.write_text(json.dumps(_chase()))
    assert script.main([str(path), "--hardware", "h200_sxm"]) == 0
    table = capsys.readouterr().out
    assert "shared capacity C = 30.0 MiB" in table
    row = "survival_one_sm_100      one SM       60.0  2.00   500.0  0.50  0.00  0.00   0.14"
    assert row in table
    assert "mean |kept - law|: lru 0.17, ramp 0.17, random 0.38" in table
    assert script.main([str(path), "--hardware", "h200_sxm", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["shared_capacity_bytes"] == H200_SHARED
    assert [p["kept"] for p in payload["points"]] == [0.0, 1.0, 0.5]


def test_shipped_h200_chase_reads() -> None:
    script = load_script("l2_survival_report")
    path = Path("data/measured/h200_2026-12-04_pointer_chase/pointer_chase.json")
    found = script.points(json.loads(path.read_text()), path, H200_SHARED)
    by_test = {p.test: p for p in found}
    assert set(by_test) == {"l2_16mib", "l2_32mib"}
    assert by_test["l2_16mib"].kept == pytest.approx(1.0, abs=1e-3)
    # 471 cycles between a 292-cycle hit and a 669-cycle DRAM load: about half kept
    assert 0.45 < by_test["l2_32mib"].kept < 0.6


@pytest.mark.parametrize(
    ("chase", "message"),
    [
        ({"tests": {}}, "tests.l2_4mib.cycles_per_hop_median: missing or not a number"),
        ({"nothing": 1}, "tests: missing"),
        (
            {"tests": {**_chase()["tests"], "dram_page_local": {"cycles_per_hop_median": 250}}},
            "tests.dram_page_local: a DRAM load (250 cycles) must take longer",
        ),
        (
            {
                "tests": {
                    "l2_4mib": {"cycles_per_hop_median": 300},
                    "dram_page_local": {"cycles_per_hop_median": 700},
                }
            },
            "no l2_<n>mib or survival_* test",
        ),
        (
            _chase(survival_one_sm_070={"cycles_per_hop_median": 400}),
            "tests.survival_one_sm_070.region_bytes: missing",
        ),
        (
            _chase(l2_32mib={"region_bytes": 32 * MIB, "cycles_per_hop_median": -1}),
            "tests.l2_32mib.cycles_per_hop_median: must be > 0",
        ),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_bad_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], chase: Any, message: str
) -> None:
    script = load_script("l2_survival_report")
    path = tmp_path / "chase.json"
    path.write_text(json.dumps(chase))
    assert script.main([str(path), "--hardware", "h200_sxm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and message in err


def test_unreadable_file_and_unknown_hardware(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("l2_survival_report")
    assert script.main([str(tmp_path / "missing.json"), "--hardware", "h200_sxm"]) == 2
    assert "missing.json: cannot read a JSON file" in capsys.readouterr().err
    path = tmp_path / "chase.json"
    path.write_text(json.dumps(_chase()))
    assert script.main([str(path), "--hardware", "h200"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'h200_sxm'" in err
