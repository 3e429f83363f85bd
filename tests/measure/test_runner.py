"""The runner with a fake backend: files written, readable by the validators, clocks handled."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from opmodel.batch.tableio import read_table
from opmodel.cli import main
from opmodel.measure import Case, CaseResult, MeasureGrid, MeasureRequest, run_measurements
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.op_latency import validate_op_latency
from opmodel.validation.op_rows import load_op_rows
from tests.measure.fakes import FakeBackend

GRID = """name: tiny
warmup: 1
repeats: 5
ops:
  - {kind: gemm, sizes: {m: [64, 128], n: [256], k: [512]}, dtypes: [bf16, tf32], trans: [NT]}
  - {kind: batched_gemm, sizes: {batch: [4], m: [64], n: [64], k: [32]}}
  - {kind: rmsnorm, sizes: {rows: [8], length: [4096]}}
  - {kind: elementwise, sizes: {rows: [8], length: [4096]}, functions: [gelu]}
  - {kind: copy, sizes: {rows: [8], length: [4096]}}
  - kind: attention_prefill
    sizes: {batch: [1], heads: [8], kv_heads: [2], seq: [256], head_dim: [128]}
"""


def _request(tmp_path: Path, **kwargs: object) -> MeasureRequest:
    grid = tmp_path / "tiny.yaml"
    grid.write_text(GRID)
    return MeasureRequest(
        grid=str(grid), hardware="h200_sxm", output_dir=str(tmp_path / "out"), **kwargs
    )


def _measured_attrs(tmp_path: Path) -> dict[str, dict[str, object]]:
    """Run the fake grid and read back each ops.csv row's attrs, by op kind."""
    run_measurements(_request(tmp_path), FakeBackend())
    with (tmp_path / "out" / "ops.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    return {row["kind"]: json.loads(row["attrs"] or "{}") for row in rows}


def test_dataset_files(tmp_path: Path) -> None:
    backend = FakeBackend()
    progress: list[tuple[int, int]] = []
    summary = run_measurements(_request(tmp_path), backend, lambda d, t: progress.append((d, t)))
    assert summary["cases"] == 9 and summary["rows"] == {"gemm.csv": 5, "ops.csv": 4}
    assert progress[-1] == (9, 9) and len(progress) == 9
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["SOURCE.md", "gemm.csv", "ops.csv", "run.json"]

    with (out / "gemm.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    first = rows[0]
    # the fake's first case: times 0.02 * (1 + 0.01 i) ms over 5 repeats -> median 0.0204
    assert float(first["time"]) == pytest.approx(0.0204)
    assert float(first["time_min"]) == pytest.approx(0.02)
    assert (first["dimM"], first["dimN"], first["dimK"], first["trans"]) == (
        "64",
        "256",
        "512",
        "NT",
    )
    assert float(first["energy"]) == pytest.approx(0.014)
    assert float(first["clock_mhz"]) == 1755.0
    tf32 = [r for r in rows if r["compute_dtype"] == "tf32"]
    assert len(tf32) == 2 and {r["dtype"] for r in tf32} == {"fp32"}

    run = json.loads((out / "run.json").read_text())
    assert run["device"]["gpu_name"] == "Fake H200"
    assert len(run["cases"]) == 9 and len(run["cases"][0]["times_ms"]) == 5
    source = (out / "SOURCE.md").read_text()
    assert "Fake H200" in source and "Driver 580.0" in source and "h200_sxm" in source
    assert "1755 / 1755 / 1755 MHz" in source and "not requested" in source


def test_gemm_csv_is_read_by_the_latency_validator(tmp_path: Path) -> None:
    run_measurements(_request(tmp_path), FakeBackend())
    loaded = load_gemm_rows(tmp_path / "out")
    assert not loaded.skipped
    assert len(loaded.rows) == 5
    row = loaded.rows[0]
    assert (row.hardware, row.clock_hz, row.transpose_b) == ("h200_sxm", 1755e6, True)
    assert row.energy_j == pytest.approx(0.014)
    bmm = next(r for r in loaded.rows if r.batch == 4)
    assert (bmm.m, bmm.n, bmm.k) == (64, 64, 32)


def test_validate_gemm_latency_runs_on_the_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_measurements(_request(tmp_path), FakeBackend())
    args = ["validate-gemm-latency", "--data-dir", str(tmp_path / "out"), "--format", "json"]
    args += ["--no-calibrate-fixed-overhead"]
    assert main(args) == 0
    assert '"h200_sxm"' in capsys.readouterr().out


def test_ops_csv_is_an_op_table(tmp_path: Path) -> None:
    run_measurements(_request(tmp_path), FakeBackend())
    table = read_table(tmp_path / "out" / "ops.csv")
    kinds = ["rmsnorm", "elementwise", "copy", "attention_prefill"]
    assert [str(kind) for kind in table["kind"]] == kinds
    output = tmp_path / "predicted.csv"
    args = ["sweep", "--ops", str(tmp_path / "out" / "ops.csv"), "--hardware", "h200_sxm"]
    assert main([*args, "--output", str(output), "--no-progress", "--workers", "1"]) == 0
    with output.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 and all(float(r["latency_s"]) > 0 and r["time"] for r in rows)


def test_clock_lock_granted_is_undone(tmp_path: Path) -> None:
    backend = FakeBackend()
    summary = run_measurements(_request(tmp_path, lock_sm_clock_mhz=1500.0), backend)
    assert backend.locked_mhz == 1500.0 and backend.unlocked
    assert summary["clock_lock"] == "locked at 1500 MHz"
    assert "locked at 1500 MHz" in (tmp_path / "out" / "SOURCE.md").read_text()


def test_clock_lock_refused_is_recorded(tmp_path: Path) -> None:
    backend = FakeBackend(allow_lock=False)
    summary = run_measurements(_request(tmp_path, lock_sm_clock_mhz=1500.0), backend)
    assert not backend.unlocked
    assert summary["clock_lock"] == "requested 1500 MHz, not permitted (clocks free)"


def test_clocks_are_unlocked_when_every_case_fails(tmp_path: Path) -> None:
    class Failing(FakeBackend):
        def measure(self, case, grid):  # type: ignore[no-untyped-def]
            raise RuntimeError("CUDA out of memory")

    backend = Failing()
    summary = run_measurements(_request(tmp_path, lock_sm_clock_mhz=1500.0), backend)
    assert backend.unlocked and summary["failed"] == 9 and summary["cases"] == 0


def test_output_dir_required(tmp_path: Path) -> None:
    request = MeasureRequest(grid="h200_8min", hardware="h200_sxm")
    with pytest.raises(ValueError, match="output_dir is required"):
        run_measurements(request, FakeBackend())


class _FailingBackend(FakeBackend):
    """Raises for the rmsnorm case, or is interrupted at the given case number."""

    def __init__(self, *, interrupt_at: int | None = None) -> None:
        super().__init__()
        self.interrupt_at = interrupt_at

    def measure(self, case: Case, grid: MeasureGrid) -> CaseResult:
        if self.interrupt_at is not None and len(self.measured) + 1 == self.interrupt_at:
            raise KeyboardInterrupt
        if case.kind.value == "rmsnorm":
            self.measured.append(case.label)
            msg = "CUDA out of memory. Tried to allocate 2.00 GiB\nmore detail"
            raise RuntimeError(msg)
        return super().measure(case, grid)


def test_a_failing_case_is_recorded_and_the_grid_goes_on(tmp_path: Path) -> None:
    summary = run_measurements(_request(tmp_path), _FailingBackend())
    assert summary["cases"] == 8 and summary["failed"] == 1 and not summary["interrupted"]
    assert summary["rows"] == {"gemm.csv": 5, "ops.csv": 3}
    out = tmp_path / "out"
    run = json.loads((out / "run.json").read_text())
    reason = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert run["failed"] == [{"label": "rmsnorm bf16 rows=8 length=4096", "reason": reason}]
    source = (out / "SOURCE.md").read_text()
    assert "all 9 cases run; 8 measured,\n  1 failed" in source
    assert f"- `rmsnorm bf16 rows=8 length=4096`: {reason}" in source


def test_an_interrupt_writes_what_was_measured(tmp_path: Path) -> None:
    backend = _FailingBackend(interrupt_at=4)
    summary = run_measurements(_request(tmp_path, lock_sm_clock_mhz=1500.0), backend)
    assert summary["interrupted"] and summary["cases"] == 3 and backend.unlocked
    assert summary["rows"] == {"gemm.csv": 3, "ops.csv": 0}
    source = (tmp_path / "out" / "SOURCE.md").read_text()
    assert "interrupted after 3 of 9 cases; 3 measured,\n  0 failed" in source
    assert "Cases that failed" not in source


def test_op_rows_carry_the_flushs_dirty_bytes(tmp_path: Path) -> None:
    """The flush zeroes a buffer of twice the L2 before each timed run, so the norm,
    elementwise, copy and attention rows say so (``l2_dirty_bytes``; GEMM rows carry it in
    gemm.csv's column)."""
    attrs = _measured_attrs(tmp_path)
    flush = 2 * 60 * 2**20  # the fake device's L2 is 60 MiB
    for kind in ("rmsnorm", "elementwise", "copy", "attention_prefill"):
        assert attrs[kind]["l2_dirty_bytes"] == flush


def test_elementwise_and_copy_rows_say_how_aten_vectorizes(tmp_path: Path) -> None:
    """The fake device runs PyTorch 2.11 on an sm_90 config (h200_sxm): ATen's elementwise ops
    and copies are marked ``aten_128bit_vectors``; the norm, GEMM and attention rows are not."""
    attrs = _measured_attrs(tmp_path)
    assert attrs["elementwise"]["aten_128bit_vectors"] is True
    assert attrs["copy"]["aten_128bit_vectors"] is True
    assert "aten_128bit_vectors" not in attrs["rmsnorm"]
    assert "aten_128bit_vectors" not in attrs["attention_prefill"]


def test_prefill_rows_say_cudnn_starts_the_query_blocks_in_launch_order(tmp_path: Path) -> None:
    """PyTorch 2.11 on an sm_90 config: SDPA runs cuDNN's fused attention, so the attention
    prefill rows carry ``cta_order: in_order``; no other row does."""
    attrs = _measured_attrs(tmp_path)
    assert attrs["attention_prefill"]["cta_order"] == "in_order"
    assert all("cta_order" not in a for kind, a in attrs.items() if kind != "attention_prefill")


def test_flash_rows_name_fa2_and_keep_the_longest_first(tmp_path: Path) -> None:
    """A prefill run on PyTorch's FlashAttention-2 (``sdpa_backends: [flash]``) is written with
    ``attention_kernel: fa2`` and without cuDNN's launch order; its default twin keeps it."""
    rows = _ops_rows_of(
        tmp_path,
        "  - kind: attention_prefill\n"
        "    sizes: {batch: [1], heads: [8], kv_heads: [2], seq: [256], head_dim: [128]}\n"
        "    sdpa_backends: [default, flash]\n",
    )
    assert len(rows) == 2
    default, flash = (json.loads(row["attrs"]) for row in rows)
    assert default["cta_order"] == "in_order" and "attention_kernel" not in default
    assert flash["attention_kernel"] == "fa2" and "cta_order" not in flash


def _ops_rows_of(tmp_path: Path, ops: str) -> list[dict[str, str]]:
    """Run a grid of ``ops`` (its YAML entries) with the fake backend into ``tmp_path / "o"``
    and read back ops.csv."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"name: g\nwarmup: 1\nrepeats: 3\nops:\n{ops}")
    request = MeasureRequest(grid=str(grid), hardware="h200_sxm", output_dir=str(tmp_path / "o"))
    run_measurements(request, FakeBackend())
    with (tmp_path / "o" / "ops.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_backward_cases_reach_the_op_validator(tmp_path: Path) -> None:
    """A grid with backward cases writes them as the models' backward ops: validate-ops reads
    them and groups them apart (``<kind>_backward``)."""
    rows = _ops_rows_of(
        tmp_path,
        "  - {kind: layernorm, sizes: {rows: [64], length: [4096]}, backward: [false, true]}\n"
        "  - kind: attention_prefill\n"
        "    sizes: {batch: [1], heads: [8], kv_heads: [2], seq: [512], head_dim: [64]}\n"
        "    backward: [true]\n",
    )
    assert [(r["kind"], r["phase"]) for r in rows] == [
        ("layernorm", "prefill"),
        ("layernorm", "train_bwd"),
        ("attention_prefill", "train_bwd"),
    ]
    assert "grad:64x4096:bf16" in rows[1]["tensors"]
    ops, skipped = load_op_rows(tmp_path / "o")
    assert len(ops) == 3 and not skipped
    result = validate_op_latency(ops, "effective_roofline")
    assert {"attention_prefill_backward:h200_sxm", "layernorm_backward:h200_sxm"} <= set(
        result.by_kind
    )


def test_grouped_cases_reach_the_op_validator(tmp_path: Path) -> None:
    """Grouped GEMM cases are written to ops.csv as grouped_gemm ops with their group sizes,
    which validate-ops reads and groups by kind (the two shortest event-timed rows of a kind
    fit the event-scope offset, the third is held out)."""
    rows = _ops_rows_of(
        tmp_path,
        "  - {kind: grouped_gemm, sizes: {groups: [8], active: [2, 4, 8], rows: [16], n: [4096], "
        "k: [2048]}}\n",
    )
    assert [json.loads(r["attrs"])["group_sizes"] for r in rows] == [
        [8, 8, 0, 0, 0, 0, 0, 0],
        [4, 4, 4, 4, 0, 0, 0, 0],
        [2, 2, 2, 2, 2, 2, 2, 2],
    ]
    ops, skipped = load_op_rows(tmp_path / "o")
    assert len(ops) == 3 and not skipped
    result = validate_op_latency(ops, "effective_roofline")
    assert "grouped_gemm:h200_sxm" in result.by_kind


def test_grouped_weight_gradient_rows_are_k_grouped_ops(tmp_path: Path) -> None:
    """trans TN cases are written as grouped_gemm ops grouped along K (C [groups, k, n]),
    which load back as such."""
    rows = _ops_rows_of(
        tmp_path,
        "  - {kind: grouped_gemm, sizes: {groups: [4], active: [4], rows: [256], n: [512], "
        "k: [1024]}, trans: [TN]}\n",
    )
    assert rows[0]["tensors"] == "input:256x1024:bf16;weight:256x512:bf16;output:4x1024x512:bf16"
    ops, skipped = load_op_rows(tmp_path / "o")
    assert not skipped and ops[0].op.view.groups_along_k  # type: ignore[union-attr]
