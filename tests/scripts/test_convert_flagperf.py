"""FlagPerf's transcribed reductions and elementwise ops: the shipped table is what the converter writes, and its
rows are the ops the READMEs describe."""

from __future__ import annotations

from pathlib import Path

from opmodel.validation.op_latency import load_op_rows
from tests.scripts.loader import load_script

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data/ops/flagperf/flagperf_a100.csv"


def test_converter_writes_the_shipped_table(tmp_path: Path) -> None:
    script = load_script("convert_flagperf")
    assert script.main(["--out", str(tmp_path)]) == 0
    assert (tmp_path / "flagperf_a100.csv").read_bytes() == SHIPPED.read_bytes()


def test_rows_are_the_published_ops(tmp_path: Path) -> None:
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / SHIPPED.name).write_bytes(SHIPPED.read_bytes())
    rows, skipped = load_op_rows(tmp_path)
    assert len(rows) == 36 and not skipped
    assert {r.hardware for r in rows} == {"a100_40gb_sxm"}
    # every elementwise op is one of 2^30 elements; mul and div by a scalar are one multiply
    elementwise = [r for r in rows if r.op.kind.value == "elementwise"]
    assert len(elementwise) == 18
    assert all(r.op.view.num_elements == 2**30 for r in elementwise)  # type: ignore[union-attr]
    scalar = [r for r in elementwise if r.op.attrs["function"] == "scalar_mul"]
    assert sorted({r.op.name for r in scalar}) == ["div", "mul"]
    reductions = [r for r in rows if r.op.kind.value == "reduction"]
    whole = [r for r in reductions if r.op.view.y.num_elements == 1]  # type: ignore[union-attr]
    assert len(whole) == 12
    assert all(r.op.view.x.num_elements == 2**30 for r in whole)  # type: ignore[union-attr]
    # the fp32 sum: 2^32 bytes in 2.9737 ms, 1.44 TB/s (93 % of the HBM2's 1,555 GB/s)
    fp32_sum = next(r for r in rows if r.label == "sum:flagperf:fp32:1024x1024x1024")
    assert abs(2**32 / fp32_sum.time_s / 1.4443e12 - 1) < 1e-3
    # argmax over 81,920 rows writes one int64 index per row; amax over the same rows the value
    argmax = [r for r in reductions if r.op.attrs["function"] == "argmax"]
    assert len(argmax) == 3
    assert all(r.op.view.y.dtype.value == "int64" for r in argmax)  # type: ignore[union-attr]
    assert all(r.op.view.reduce_length == 81920 for r in argmax)  # type: ignore[union-attr]
