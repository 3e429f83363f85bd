"""Copy Liger-Kernel's published nn.Embedding forward and forward-and-backward timings into
data/blocks/liger_embedding.csv.

Usage: python scripts/convert_liger_embedding.py [--shared-dir ../shared/data] [--out data/blocks]

Liger's ``embedding`` benchmark (benchmark/scripts/benchmark_embedding.py) times, per
provider, the forward gather (mode ``forward``) and ``full``: the forward, a
``torch.randn_like`` of its output for dy, and ``output.backward(dy)``, whose table gradient
accumulates into the weight's ``.grad`` (``do_bench`` resets no gradient between calls).
Kept: the ``speed`` rows of both modes by ``huggingface`` (``nn.Embedding``: ATen's
``index_select`` forward, ``embedding_dense_backward`` backward) on the A100-SXM4-80GB (Liger
0.2.1), 16,384 int64 indices into fp32 tables of 1,024-131,072 rows of 768 or 4,096. Left
out: the ``liger`` provider (its backward is one Triton kernel of atomic adds, a structure
the model does not describe) and ``torch_compile`` (Inductor's kernels).
Numbers are copied, never edited (data/blocks/SOURCE.md).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from csv_table import converter_main, write_table

TABLE = "liger_kernel_benchmarks/all_benchmark_data.csv"
GPUS = {"NVIDIA A100-SXM4-80GB": "a100_80gb_sxm"}
PROVIDER = "huggingface"
MODES = ("forward", "full")
DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}
COLUMNS = (
    "label",
    "hardware",
    "mode",
    "provider",
    "tokens",
    "vocab",
    "hidden",
    "dtype",
    "time_ms",
    "liger_version",
)


def embedding_row(record: dict[str, str]) -> dict[str, object] | None:
    """The row of one benchmark record, or None when it is not a kept row."""
    kept = (
        record["kernel_name"] == "embedding"
        and record["metric_name"] == "speed"
        and record["kernel_provider"] == PROVIDER
        and record["kernel_operation_mode"] in MODES
        and record["gpu_name"] in GPUS
    )
    if not kept:
        return None
    extra = json.loads(record["extra_benchmark_config_str"])
    tokens = int(extra["B"]) * int(extra["T"])
    vocab, hidden = int(float(record["x_value"])), int(extra["D"])
    mode, hardware = record["kernel_operation_mode"], GPUS[record["gpu_name"]]
    return {
        "label": f"embedding:{PROVIDER}:{mode}:{hardware}:M{tokens}:N{hidden}:V{vocab}",
        "hardware": hardware,
        "mode": mode,
        "provider": PROVIDER,
        "tokens": tokens,
        "vocab": vocab,
        "hidden": hidden,
        "dtype": DTYPES[str(extra["dtype"])],
        "time_ms": record["y_value_50"],
        "liger_version": record["liger_version"],
    }


def convert(shared: Path, out: Path) -> list[dict[str, object]]:
    """Every kept row, written to ``out/liger_embedding.csv``."""
    with (shared / TABLE).open(newline="") as handle:
        rows = [r for r in map(embedding_row, csv.DictReader(handle)) if r is not None]
    write_table(out / "liger_embedding.csv", COLUMNS, rows)
    return rows


def main(argv: list[str] | None = None) -> int:
    return converter_main(
        "convert_liger_embedding", __doc__.splitlines()[0], argv, (TABLE,), convert
    )


if __name__ == "__main__":
    from script_errors import run

    run("convert_liger_embedding", main)
