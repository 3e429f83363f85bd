"""validate-artifact, per-op mode: EnergAIzer's per-kernel CSVs, their rows and the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from opmodel import ConfigError
from opmodel.cli import main
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.validation.artifact_perop import load_measured_ops, predict_measured_ops


@pytest.fixture
def per_kernel(tmp_path: Path) -> Path:
    """EnergAIzer-style per-kernel files: GEMM/bmm, softmax, layernorm and attention rows."""
    root = tmp_path / "kernels"
    root.mkdir()
    (root / "yz8_gemm_freq900.csv").write_text(
        "time,energy,batch,dimM,dimN,dimK,trans,kernel_name,grid_size,block_size,useTensorCore\n"
        "0.5,0.05,1,2048,2048,2048,NN,ampere_bf16_s16816gemm,128,256,True\n"
        "0.2,0.02,16,512,512,64,NT,ampere_bf16_s16816gemm,64,256,True\n"
        "0.0,0.02,1,64,64,64,NN,k,1,1,True\n"
    )
    (root / "a10_softmax_freq900.csv").write_text(
        "time,energy,batch,dim,prec\n0.05,0.004,4096,1024,bf16\n0.05,0.004,4096,1024,fp32\n"
    )
    (root / "a10_layernorm_freq900.csv").write_text(
        "time,energy,rows,row_length\n0.04,0.003,8192,1024\n"
    )
    (root / "yz8_flash_attention_freq900.csv").write_text(
        "time,energy,batch,nheads,seqlen,headdim,causal\n1.2,0.15,2,16,2048,64,true\n"
        "1.0,0.1,2,16,,64,false\n"
    )
    (root / "yz8_pooling_freq900.csv").write_text("time,energy,batch\n0.1,0.01,4\n")
    return root


def test_per_op_rows(per_kernel: Path) -> None:
    rows, skipped = load_measured_ops(per_kernel)
    types = sorted((r.op_type, r.hardware) for r in rows)
    assert types == [
        ("bmm", "a100_40gb_pcie"),
        ("flash_attention", "a100_40gb_pcie"),
        ("gemm", "a100_40gb_pcie"),
        ("layernorm", "a10"),
        ("softmax", "a10"),
    ]
    assert all(r.clock_hz == 900e6 for r in rows)
    bmm = next(r for r in rows if r.op_type == "bmm")
    assert bmm.op.tensors[1].shape == (16, 512, 64)  # NT: B stored [batch, n, k]
    assert bmm.op.attrs["transpose_b"] is True
    assert skipped["time not from 1e-06 to 1e+08 ms"] == 1  # the 0.0 ms GEMM
    assert skipped["not bf16 (fp32)"] == 1
    assert skipped["attention row needs batch, heads, seq and head_dim"] == 1
    assert sum(skipped.values()) == 4  # and the pooling row: unknown op type


def test_per_op_cli(per_kernel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "ops.svg"
    args = ["validate-artifact", "--data-dir", str(per_kernel), "--format", "json"]
    assert main([*args, "--output-csv", str(tmp_path / "ops.csv"), "--output-plot", str(plot)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mode"] == "per-op" and summary["rows"] == 5
    assert summary["groups"]["a10:softmax"]["energy"]["count"] == 1
    square = tmp_path / "ops_square_gemm.svg"
    softmax = tmp_path / "ops_softmax.svg"
    assert plot.is_file() and square.is_file() and softmax.is_file()
    assert (tmp_path / "ops_energy_breakdown.svg").is_file()
    with (tmp_path / "ops.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 5


def test_measure_dataset_rows_and_loop_period(tmp_path: Path) -> None:
    """An `opmodel measure` folder: op-table rows (bf16 only) and each case's energy-loop
    period from run.json, over which the prediction adds idle power where the loop's runs
    were spaced wider than the predicted kernel (a host-bound loop)."""
    root = tmp_path / "h200"
    root.mkdir()
    header = "name,kind,phase,tensors,attrs,time,energy,hardware,clock_mhz,label\n"
    (root / "ops.csv").write_text(
        header
        + 'norm,rmsnorm,prefill,input:64x4096:bf16;weight:4096:bf16;output:64x4096:bf16,"{}",'
        "0.006,0.002,h200_sxm,1980,norm small\n"
        + "add,elementwise,prefill,input:64x64:bf16;input:64x64:bf16;output:64x64:bf16,"
        '"{""function"": ""add""}",0.005,0.001,h200_sxm,1980,add tiny\n'
        + 'fp32,rmsnorm,prefill,input:64x4096:fp32;weight:4096:fp32;output:64x4096:fp32,"{}",'
        "0.006,0.002,h200_sxm,1980,norm fp32\n"
    )
    cases = [
        {"label": "norm small", "energy_loop_s": 0.2, "energy_runs": 10000},  # 20 us per run
        {"label": "add tiny", "energy_loop_s": 0.2, "energy_runs": 40000},  # 5 us per run
    ]
    (root / "run.json").write_text(json.dumps({"cases": cases}))
    rows, skipped = load_measured_ops(root)
    assert sorted(r.op_type for r in rows) == ["elementwise/add", "rmsnorm"]
    assert skipped == {"not bf16 (fp32)": 1}
    norm = next(r for r in rows if r.op_type == "rmsnorm")
    assert norm.loop_period_s == pytest.approx(20e-6) and norm.clock_hz == 1980e6
    (prediction,) = predict_measured_ops([norm], "effective_roofline")
    spec = load_hardware("h200_sxm").at_clock(1980e6)
    profile = get_model("effective_roofline").predict(norm.op, spec)
    gap_j = spec.power.static_w * (20e-6 - profile.latency_s)
    assert profile.latency_s < 20e-6 and prediction.parts_j["idle_gap"] == pytest.approx(gap_j)
    assert prediction.energy_j == pytest.approx(profile.energy_j + gap_j)


def test_unreadable_run_json_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    (root / "ops.csv").write_text("name,kind,phase,tensors,attrs,time,energy,hardware,label\n")
    cases = (
        ("{not json", r"run\.json: not JSON \(Expecting property name .*, line 1\)$"),
        (
            '{"cases": [{"energy_runs": "many", "energy_loop_s": 0.2}]}',
            r"run\.json: not a readable opmodel measure run",
        ),
    )
    for text, message in cases:
        (root / "run.json").write_text(text)
        with pytest.raises(ConfigError, match=message):
            load_measured_ops(root)
