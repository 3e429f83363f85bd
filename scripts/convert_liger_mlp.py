"""Copy Liger-Kernel's published LLaMA MLP-block timings into data/blocks/liger_mlp.csv.

Usage: python scripts/convert_liger_mlp.py [--shared-dir ../shared/data] [--out data/blocks]

Liger's ``swiglu``, ``geglu``, ``tiled_swiglu`` and ``tiled_geglu`` benchmarks time a whole
LLaMA MLP block, ``down_proj(act(gate_proj(x)) * up_proj(x))``: three GEMMs and the
activation (benchmark/scripts/benchmark_swiglu.py, benchmark_geglu.py, benchmark_tiled_mlp.py).
Kept: the forward ``speed`` rows of the providers that run the block unsharded, ``huggingface``
(transformers' ``LlamaMLP``: the activation and the product as two ATen kernels) and ``liger``
/ ``liger_triton`` (``LigerSwiGLUMLP`` / ``LigerGEGLUMLP``: one Triton kernel for both), and
the ``backward`` rows of ``huggingface`` (ATen's autograd kernels), on the GPUs with a shipped
config. Left out: the tiled providers (the sequence in shards, with copies and a
concatenation around them), cuTile's kernels, Liger's backward kernels (one Triton kernel for
both gradients, a structure the model does not describe) and the full mode (forward, a
``randn_like`` and backward).
Numbers are copied, never edited (data/blocks/SOURCE.md).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from csv_table import converter_main, write_table

TABLES = (
    "liger_kernel_benchmarks/all_benchmark_data.csv",
    "liger_kernel_benchmarks/all_benchmark_data_cutile.csv",
)
GPUS = {
    "NVIDIA A100-SXM4-80GB": "a100_80gb_sxm",
    "NVIDIA B200": "b200",
    "NVIDIA GeForce RTX 4090": "rtx4090",
}
BENCHMARKS = ("swiglu", "geglu", "tiled_swiglu", "tiled_geglu")
PROVIDERS = ("huggingface", "liger", "liger_triton")  # the unsharded blocks
MODES = {"forward": PROVIDERS, "backward": ("huggingface",)}  # mode -> providers kept
ACTIVATIONS = {"silu": "silu", "gelu_pytorch_tanh": "gelu_tanh"}
DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32"}
COLUMNS = (
    "label",
    "hardware",
    "benchmark",
    "mode",
    "provider",
    "activation",
    "tokens",
    "hidden",
    "intermediate",
    "dtype",
    "time_ms",
    "liger_version",
)


def block_row(record: dict[str, str]) -> dict[str, object] | None:
    """The block of one benchmark record, or None when it is not a kept row."""
    mode = record["kernel_operation_mode"]
    kept = (
        record["metric_name"] == "speed"
        and record["kernel_provider"] in MODES.get(mode, ())
        and record["kernel_name"] in BENCHMARKS
        and record["gpu_name"] in GPUS
    )
    if not kept:
        return None
    extra = json.loads(record["extra_benchmark_config_str"])
    batch = int(extra.get("B", extra.get("bsz", 1)))
    tokens = batch * int(float(record["x_value"]))
    hardware = GPUS[record["gpu_name"]]
    kernel, provider = record["kernel_name"], record["kernel_provider"]
    named = f"{provider}:backward" if mode == "backward" else provider
    return {
        "label": f"{kernel}:{named}:{hardware}:T{tokens}",
        "hardware": hardware,
        "benchmark": kernel,
        "mode": mode,
        "provider": "liger" if provider == "liger_triton" else provider,
        "activation": ACTIVATIONS[str(extra["hidden_act"])],
        "tokens": tokens,
        "hidden": int(extra["hidden_size"]),
        "intermediate": int(extra["intermediate_size"]),
        "dtype": DTYPES[str(extra["dtype"])],
        "time_ms": record["y_value_50"],
        "liger_version": record["liger_version"],
    }


def convert(shared: Path, out: Path) -> list[dict[str, object]]:
    """Every kept row of both tables, written to ``out/liger_mlp.csv``."""
    rows = []
    for table in TABLES:
        with (shared / table).open(newline="") as handle:
            rows += [r for r in map(block_row, csv.DictReader(handle)) if r is not None]
    write_table(out / "liger_mlp.csv", COLUMNS, rows)
    return rows


def main(argv: list[str] | None = None) -> int:
    return converter_main("convert_liger_mlp", __doc__.splitlines()[0], argv, TABLES, convert)


if __name__ == "__main__":
    from script_errors import run

    run("convert_liger_mlp", main)
