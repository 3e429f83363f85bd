"""validate-artifact, per-op mode: EnergAIzer's per-kernel CSVs, their rows and the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.validation.artifact_perop import load_measured_ops


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
    assert skipped["non-positive or missing time or energy"] == 1
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
