"""predict_many and sweeps: same numbers as predict, deduplication, formats, engines, errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from opmodel import ConfigError, InvalidKernelError, OpModelError, OpValidationError
from opmodel.batch import (
    RESULT_COLUMNS,
    EngineChoice,
    SweepOptions,
    op_from_row,
    op_to_row,
    predict_many,
    run_sweep,
)
from opmodel.cli import main
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.parsing import load_op

from ..conftest import EXAMPLES, gemm

# every example but the collective's, which needs a config's interconnect (mi300x has none)
OPS = [op for op in map(load_op, sorted(EXAMPLES.glob("*.yaml"))) if op.kind != "collective"]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _table(tmp_path: Path, repeats: int = 3) -> tuple[Path, list[dict[str, str]]]:
    rows = [{**op_to_row(op), "layer": str(i)} for i in range(repeats) for op in OPS]
    return _write(tmp_path / "ops.csv", rows), rows


def test_predict_many_equals_predict_and_shares_repeats() -> None:
    hw = load_hardware("a10")
    model = get_model("effective_roofline")
    twice = [*OPS, *(load_op(path) for path in sorted(EXAMPLES.glob("*.yaml")))]
    twice = [op for op in twice if op.kind != "collective"]
    profiles = predict_many(twice, "a10", "effective_roofline")
    assert [p.latency_s for p in profiles[: len(OPS)]] == [
        model.predict(op, hw).latency_s for op in OPS
    ]
    assert all(a is b for a, b in zip(profiles[: len(OPS)], profiles[len(OPS) :], strict=True))
    assert predict_many([], hw, model) == []


def test_predict_many_rejects_what_is_not_an_op() -> None:
    with pytest.raises(OpValidationError, match=r"ops\[1\] is not a LocalOp \(got dict\)"):
        predict_many([gemm(64, 64, 64), {"kind": "gemm"}], "a10")  # type: ignore[list-item]
    with pytest.raises(OpModelError, match="unknown hardware config 'a1'"):
        predict_many([gemm(64, 64, 64)], "a1")


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_sweep_writes_every_row_with_its_prediction(tmp_path: Path, suffix: str) -> None:
    ops_path, rows = _table(tmp_path)
    out = tmp_path / f"out{suffix}"
    summary = run_sweep(ops_path, "h100_sxm", out, SweepOptions(model="roofline"))
    assert (summary.rows, summary.unique_ops, summary.error_rows) == (len(rows), len(OPS), 0)
    if suffix == ".csv":
        result = _read(out)
        latencies = [float(r["latency_s"]) for r in result]
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(out).to_pydict()
        result = [
            dict(zip(table, values, strict=True)) for values in zip(*table.values(), strict=True)
        ]
        latencies = [r["latency_s"] for r in result]
    assert list(result[0]) == [*rows[0], *RESULT_COLUMNS]
    assert [r["layer"] for r in result] == [r["layer"] for r in rows]  # carried through
    hw, model = load_hardware("h100_sxm"), get_model("roofline")
    expected = [model.predict(op, hw).latency_s for op in OPS] * 3
    assert latencies == expected  # full precision survives the CSV


def test_sweep_on_local_processes_matches_in_process(tmp_path: Path) -> None:
    rows = [op_to_row(gemm(m, 256, 512)) for m in range(1, 601)]  # 600 distinct ops
    ops_path = _write(tmp_path / "ops.csv", rows)
    one = run_sweep(ops_path, "a10", tmp_path / "one.csv", SweepOptions(model="roofline"))
    two_options = SweepOptions(model="roofline", engine=EngineChoice(workers=2))
    two = run_sweep(ops_path, "a10", tmp_path / "two.csv", two_options)
    assert (one.unique_ops, two.unique_ops) == (600, 600)
    assert _read(tmp_path / "one.csv") == _read(tmp_path / "two.csv")


def test_sweep_at_a_clock(tmp_path: Path) -> None:
    ops_path = _write(tmp_path / "ops.csv", [op_to_row(gemm(4096, 4096, 4096))])
    run_sweep(ops_path, "a100_40gb_pcie", tmp_path / "fast.csv", SweepOptions(model="roofline"))
    slow = SweepOptions(model="roofline", clock_hz=705e6)
    run_sweep(ops_path, "a100_40gb_pcie", tmp_path / "slow.csv", slow)
    fast_s = float(_read(tmp_path / "fast.csv")[0]["latency_s"])
    assert float(_read(tmp_path / "slow.csv")[0]["latency_s"]) == pytest.approx(2 * fast_s)


def test_sweep_in_burst(tmp_path: Path) -> None:
    """``power_state='burst'``: an unlocked H100 at its burst power-limited clock runs a large
    GEMM faster than sustained; burst with a locked clock, or an unknown state, is an error."""
    ops_path = _write(tmp_path / "ops.csv", [op_to_row(gemm(8192, 8192, 8192))])
    run_sweep(ops_path, "h100_sxm", tmp_path / "sustained.csv", SweepOptions())
    run_sweep(ops_path, "h100_sxm", tmp_path / "burst.csv", SweepOptions(power_state="burst"))
    sustained = float(_read(tmp_path / "sustained.csv")[0]["latency_s"])
    assert float(_read(tmp_path / "burst.csv")[0]["latency_s"]) < 0.95 * sustained
    with pytest.raises(ConfigError, match="clock_hz locks the clock"):
        SweepOptions(power_state="burst", clock_hz=1.2e9)
    with pytest.raises(ConfigError, match="must be one of sustained, burst"):
        SweepOptions(power_state="boost")


def test_an_invalid_row_stops_the_sweep_with_one_line(tmp_path: Path) -> None:
    ops_path, rows = _table(tmp_path, repeats=1)
    rows[4]["tensors"] = "input:64:bf17;output:64:bf16"
    rows[6]["kind"] = "gemn"
    _write(ops_path, rows)
    with pytest.raises(ConfigError) as info:
        run_sweep(ops_path, "a10", tmp_path / "out.csv")
    assert info.value.problems == (
        f"{ops_path}: row 5: tensors: tensor 0 'input:64:bf17' dtype: must be one of fp64, fp32, "
        "tf32, fp16, "
        "bf16, fp8, fp8_e4m3, fp8_e5m2, mxfp8, fp6, mxfp6, fp4, mxfp4, nvfp4, int64, int32, int8, int4 (got 'bf17'); did you mean "
        "'bf16'? (and 1 more rows; --skip-invalid records them)",
    )
    assert not (tmp_path / "out.csv").exists()
    summary = run_sweep(ops_path, "a10", tmp_path / "out.csv", SweepOptions(skip_invalid=True))
    result = _read(tmp_path / "out.csv")
    assert summary.error_rows == 2
    name = rows[6]["name"]
    assert result[6]["error"].startswith(f"{ops_path}: row 7: op '{name}': kind: must be one of")
    assert result[6]["latency_s"] == "" and float(result[7]["latency_s"]) > 0


def test_an_error_at_predict_time_names_its_row(tmp_path: Path) -> None:
    """A row that parses but that the model rejects (a kernel attr, a dtype the hardware lacks)
    names the file and row too, in the sweep and in predict_many."""
    good = op_to_row(gemm(256, 256, 256))
    bad = {**good, "name": "odd", "attrs": json.dumps({"cta_tile_m": 96, "cta_tile_n": 100})}
    ops_path = _write(tmp_path / "ops.csv", [good, bad])
    options = SweepOptions(model="extended_roofline", skip_invalid=True)
    run_sweep(ops_path, "a10", tmp_path / "out.csv", options)
    error = _read(tmp_path / "out.csv")[1]["error"]
    assert error.startswith(f"{ops_path}: row 2: op 'odd' (gemm): kernel: ")
    with pytest.raises(InvalidKernelError) as info:  # the class is kept
        predict_many([gemm(64, 64, 64), op_from_row(bad, "row 2")], "a10", "extended_roofline")
    assert str(info.value).startswith("predict_many: ops[1] ('odd'): op 'odd' (gemm): kernel: ")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: p.write_text("name,kind,phase\nx,gemm,prefill\n"), "missing column 'tensors'"),
        (
            lambda p: p.write_text("name,kind,phase,tensors,latency_s\n"),
            "column 'latency_s' is a result column",
        ),
        (lambda p: p.write_text("name,kind\nx\n"), "line 2: 1 cells for 2 columns"),
        (lambda p: p.write_text(""), r"empty file \(expected a header row\)"),
    ],
)
def test_bad_tables(tmp_path: Path, setup: object, message: str) -> None:
    path = tmp_path / "ops.csv"
    setup(path)  # type: ignore[operator]
    with pytest.raises(ConfigError, match=message):
        run_sweep(path, "a10", tmp_path / "out.csv")


def test_bad_output_and_engine(tmp_path: Path) -> None:
    ops_path, _ = _table(tmp_path, repeats=1)
    with pytest.raises(
        ConfigError, match=r"unknown table format '\.xlsx' \(accepted: \.csv, \.parquet, \.pq\)"
    ):
        run_sweep(ops_path, "a10", tmp_path / "out.xlsx")
    with pytest.raises(ConfigError, match="unknown engine 'spark'"):
        run_sweep(
            ops_path, "a10", tmp_path / "o.csv", SweepOptions(engine=EngineChoice(kind="spark"))
        )
    with pytest.raises(ConfigError, match="engine dask needs --address"):
        run_sweep(
            ops_path, "a10", tmp_path / "o.csv", SweepOptions(engine=EngineChoice(kind="dask"))
        )


def test_sweep_on_a_local_ray_cluster(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    ops_path, rows = _table(tmp_path)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        options = SweepOptions(model="roofline", engine=EngineChoice(kind="ray"))
        summary = run_sweep(ops_path, "a10", tmp_path / "ray.csv", options)
    finally:
        ray.shutdown()
    run_sweep(ops_path, "a10", tmp_path / "here.csv", SweepOptions(model="roofline"))
    assert summary.rows == len(rows)
    assert _read(tmp_path / "ray.csv") == _read(tmp_path / "here.csv")


def test_sweep_on_a_local_dask_cluster(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    ops_path, rows = _table(tmp_path)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        engine = EngineChoice(kind="dask", address=cluster.scheduler_address)
        summary = run_sweep(ops_path, "a10", tmp_path / "dask.csv", SweepOptions(engine=engine))
    run_sweep(ops_path, "a10", tmp_path / "here.csv")
    assert summary.rows == len(rows)
    assert _read(tmp_path / "dask.csv") == _read(tmp_path / "here.csv")


def test_cli_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ops_path, rows = _table(tmp_path, repeats=2)
    out = tmp_path / "out.csv"
    argv = ["sweep", "--ops", str(ops_path), "--hardware", "mi300x", "--output", str(out)]
    assert main([*argv, "--model", "roofline", "--workers", "1"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert (summary["rows"], summary["unique_ops"], summary["engine"]) == (
        len(rows),
        len(OPS),
        "local",
    )
    assert "sweep: 100% of" in captured.err
    assert len(_read(out)) == len(rows)
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--engine", "spark"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'spark'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("model", "low_ms", "high_ms"), [("roofline", 1.55, 1.7), ("effective_roofline", 2.4, 2.6)]
)
def test_moe_layer_example_sweeps(
    tmp_path: Path, model: str, low_ms: float, high_ms: float
) -> None:
    """examples/sweep_mixtral_moe_layer.csv (README, "A mixture-of-experts layer's ops"): every
    row predicted on the H100; the layer's sum is the README's 1.6 ms (roofline) and 2.5 ms
    (effective_roofline), most of it the grouped GEMMs."""
    options = SweepOptions(model=model, engine=EngineChoice(workers=1))
    output = tmp_path / "moe.csv"
    run_sweep(EXAMPLES / "sweep_mixtral_moe_layer.csv", "h100_sxm", output, options)
    rows = _read(output)
    latency = {row["name"]: float(row["latency_s"]) for row in rows}
    assert len(rows) == 8 and all(value > 0 for value in latency.values())
    assert low_ms < sum(latency.values()) * 1e3 < high_ms
    assert latency["experts_up"] + latency["experts_down"] > 0.8 * sum(latency.values())
