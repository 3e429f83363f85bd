"""scripts/convert_op_data.py on Liger-Kernel's benchmark CSVs: the rows of its row-per-program
Triton kernels added on 2026-12-07 (relu_squared, the Megatron SwiGLU and RMSNorm, RoPE), on a
small fixture in the shared file's exact columns (data/ops/liger/SOURCE.md)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.scripts.loader import load_script

CONVERT = load_script("convert_op_data")
HEADER = (
    "kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,"
    "x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,"
    "liger_version"
)
H100, A100, B200 = "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA B200"


def _record(
    name: str,
    provider: str,
    x: tuple[str, int],
    ms: float,
    extra: dict[str, object],
    *,
    gpu: str,
    mode: str = "forward",
) -> dict[str, str]:
    return {
        "kernel_name": name, "kernel_provider": provider, "kernel_operation_mode": mode,
        "metric_name": "speed", "metric_unit": "ms", "x_name": x[0], "x_label": x[0],
        "x_value": str(x[1]), "y_value_50": str(ms), "y_value_20": str(ms), "y_value_80": str(ms),
        "extra_benchmark_config_str": json.dumps(extra), "gpu_name": gpu,
        "timestamp": "2026-01-01", "liger_version": "0.8.0",
    }  # fmt: skip


def _write(path: Path, records: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=HEADER.split(","))
        writer.writeheader()
        writer.writerows(records)


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row["label"]: row for row in csv.DictReader(handle)}


def test_liger_elementwise_norm_and_rope_rows(tmp_path: Path) -> None:
    bf16 = "torch.bfloat16"
    rope = {"dtype": bf16, "seq_len": 2048, "num_q_heads": 32, "num_kv_heads": 8}
    rope_t = {"dtype": bf16, "hidden_size": 8192, "num_q_heads": 32, "num_kv_heads": 8}
    records = [
        _record("relu_squared", "liger", ("N", 2048), 0.017, {"M": 4096, "dtype": bf16}, gpu=H100),
        _record("relu_squared", "torch", ("N", 2048), 0.027, {"M": 4096, "dtype": bf16}, gpu=H100),
        _record("megatron_swiglu", "liger", ("ffn_local", 1024), 0.023, {"S": 2048, "B": 4}, gpu=H100),
        _record("megatron_swiglu", "liger_in_place", ("ffn_local", 1024), 0.023,
                {"S": 2048, "B": 4}, gpu=H100),
        _record("megatron_rms_norm", "liger", ("H", 4096), 0.029, {"S": 4096, "B": 1}, gpu=H100),
        _record("megatron_rms_norm", "liger", ("H", 4096), 0.06, {"S": 4096, "B": 1}, gpu=H100,
                mode="backward"),
        _record("rope", "liger", ("H", 2048), 0.021, rope, gpu=A100),
        _record("rope", "liger", ("T", 1024), 0.034, rope_t, gpu=A100),
        _record("rope", "huggingface", ("T", 1024), 0.28, rope_t, gpu=A100),
        _record("fused_add_rms_norm", "liger_fused_add_rms_norm", ("H", 4096), 0.0495,
                {"M": 2048, "dtype": "torch.float32", "eps": 1e-6}, gpu=H100),
        _record("fused_add_rms_norm", "liger_rms_norm", ("H", 4096), 0.0958,
                {"M": 2048, "dtype": "torch.float32", "eps": 1e-6}, gpu=H100),
    ]  # fmt: skip
    shared, out = tmp_path / "shared", tmp_path / "out"
    _write(shared / CONVERT.LIGER_TABLE, records)
    CONVERT.convert_liger(shared, out)
    rows = _rows(out / "liger" / "liger.csv")
    # eager multi-kernel modules and the in-place SwiGLU (the same forward kernel) are left out
    assert sorted(rows) == [
        "fused_add_rms_norm:liger_fused_add_rms_norm:M2048:N4096",
        "megatron_rms_norm:liger:M4096:N4096",
        "megatron_swiglu:liger:M8192:N1024",
        "relu_squared:liger:M4096:N2048",
        "rope:liger:T1024:H32+8x256",
        "rope:liger:T2048:H32+8x64",
    ]
    relu = rows["relu_squared:liger:M4096:N2048"]
    assert (relu["kind"], relu["hardware"], relu["timing_scope"]) == (
        "elementwise",
        "h100_sxm",
        "event",
    )
    assert relu["tensors"] == "input:4096x2048:bf16;output:4096x2048:bf16"
    attrs = json.loads(relu["attrs"])
    assert attrs == {"function": "relu_squared", "implementation": "fused",
                     "l2_dirty_bytes": CONVERT.DO_BENCH_FLUSH_BYTES}  # fmt: skip
    # S x B tokens of the gate and up halves (one [tokens, 2 x ffn] buffer), bf16 by default
    swiglu = rows["megatron_swiglu:liger:M8192:N1024"]
    assert swiglu["tensors"] == ("input:8192x1024:bf16;input:8192x1024:bf16;output:8192x1024:bf16")
    assert json.loads(swiglu["attrs"])["function"] == "silu_and_mul"
    norm = rows["megatron_rms_norm:liger:M4096:N4096"]
    assert norm["kind"] == "rmsnorm"
    assert norm["tensors"].startswith("input:4096x4096:bf16;weight:4096:bf16")
    # hidden 2048 over 32 query heads: head size 64; q and k heads of 2048 tokens, cos/sin halves
    assert rows["rope:liger:T2048:H32+8x64"]["tensors"] == (
        "input:2048x40x64:bf16;input:2048x1x64:bf16;output:2048x40x64:bf16"
    )
    assert rows["rope:liger:T1024:H32+8x256"]["hardware"] == "a100_80gb_sxm"
    # x and the residual in, the norm and the sum out (the add and the torch RMSNorm left out)
    fused_add = rows["fused_add_rms_norm:liger_fused_add_rms_norm:M2048:N4096"]
    assert fused_add["kind"] == "rmsnorm"
    assert fused_add["tensors"] == (
        "input:2048x4096:fp32;input/residual:2048x4096:fp32;weight:4096:fp32;"
        "output:2048x4096:fp32;output/residual:2048x4096:fp32"
    )


def _convert_cutile(tmp_path: Path, records: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    """``records`` as the shared cuTile file, converted; the rows by label."""
    shared, out = tmp_path / "shared", tmp_path / "out"
    _write(shared / CONVERT.LIGER_CUTILE_TABLE, records)
    CONVERT.convert_liger_cutile(shared, out)
    return _rows(out / "liger" / "liger_cutile.csv")


def test_cutile_rope_rows_count_the_batch(tmp_path: Path) -> None:
    extra = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
             "dtype": "torch.bfloat16", "bsz": 2, "seq_len": 8192}  # fmt: skip
    records = [
        _record("rope", "liger_triton", ("T", 1024), 0.010, extra, gpu=B200),
        _record("rope", "liger_cutile", ("T", 1024), 0.009, extra, gpu=B200),
    ]
    rows = _convert_cutile(tmp_path, records)
    assert list(rows) == ["rope:liger_triton:T2048:H32+8x128"]
    row = rows["rope:liger_triton:T2048:H32+8x128"]
    assert (row["hardware"], row["source"], row["implementation"]) == (
        "b200",
        "liger_cutile",
        "fused",
    )


def test_cutile_softmax_backward_rows(tmp_path: Path) -> None:
    extra = {"hidden_size": 4096, "dtype": "torch.bfloat16", "bsz": 1, "seq_len": 8192}
    records = [
        _record("softmax", "torch", ("BT", 2048), 0.022, extra, gpu=B200, mode="backward"),
        # Liger's Triton backward and every full-pass row stay out
        _record("softmax", "liger_triton", ("BT", 2048), 0.054, extra, gpu=B200, mode="backward"),
        _record("softmax", "torch", ("BT", 2048), 0.05, extra, gpu=B200, mode="full"),
    ]
    rows = _convert_cutile(tmp_path, records)
    assert list(rows) == ["softmax:torch:backward:M2048:N4096"]
    row = rows["softmax:torch:backward:M2048:N4096"]
    assert (row["kind"], row["phase"], row["timing_scope"]) == ("softmax", "train_bwd", "event")
    assert row["tensors"] == "input:2048x4096:bf16;grad:2048x4096:bf16;output:2048x4096:bf16"
    attrs = json.loads(row["attrs"])
    assert attrs == {
        "implementation": "pytorch",
        "aten_128bit_vectors": True,
        "l2_dirty_bytes": 268435456,
    }
