"""The declared training split of the MI355X's shipped power-limited clock, and
validate-gemm-latency holding it out."""

from __future__ import annotations

from pathlib import Path

from opmodel.validation.clock_split import CLOCK_SPLITS, clock_training_rows
from opmodel.validation.gemm_data import GemmRow, load_gemm_rows
from opmodel.validation.gemm_latency import ValidationOptions, validate_gemm_latency

HEADER = "batch,dimM,dimN,dimK,dtype,time,hardware,source,power_state\n"


def _rows(tmp_path: Path, lines: list[str]) -> list[GemmRow]:
    (tmp_path / "g.csv").write_text(HEADER + "".join(line + "\n" for line in lines))
    return list(load_gemm_rows(tmp_path).rows)


def test_split_takes_the_largest_xla_rows_of_the_mi355x_only(tmp_path: Path) -> None:
    """2 x 4096^3 = 2^37 is in; 4096^3 (2^36) is not; another GPU or source is not."""
    loaded = _rows(
        tmp_path,
        [
            "2,4096,4096,4096,bf16,0.2,mi355x,xla,burst",
            "4,4096,4096,4096,fp16,0.4,mi355x,xla,burst",
            "1,4096,4096,4096,bf16,0.1,mi355x,xla,burst",
            "2,4096,4096,4096,bf16,0.2,mi355x,other,burst",
            "2,4096,4096,4096,bf16,0.2,b200,xla,burst",
        ],
    )
    split = CLOCK_SPLITS["mi355x"]
    assert split.min_work == 2**37
    assert [split.contains(r) for r in loaded] == [True, True, False, False, False]
    assert clock_training_rows(loaded) == {"mi355x": [0, 1]}
    assert "'" not in split.description and "2^37" in split.description


def test_validate_gemm_latency_holds_the_training_rows_out(tmp_path: Path) -> None:
    """In both modes the two split rows are in no figure and are reported as held out."""
    loaded = _rows(
        tmp_path,
        [
            "2,4096,4096,4096,bf16,0.0002,mi355x,xla,burst",
            "1,4096,4096,1024,bf16,0.00004,mi355x,xla,burst",
            "1,2048,2048,2048,bf16,0.00002,mi355x,xla,burst",
            "4,4096,4096,4096,fp16,0.0004,mi355x,xla,burst",
        ],
    )
    for calibrate in (False, True):
        report = validate_gemm_latency(
            loaded,
            ["effective_roofline"],
            options=ValidationOptions(calibrate=calibrate),
        )
        assert report.shipped_clock_training_rows == {"mi355x": 2}
        shapes = {(r["batch"], r["m"], r["k"]) for r in report.per_row}
        assert shapes == {(1, 4096, 1024), (1, 2048, 2048)}
