"""Convert the public non-GEMM kernel measurements in ../shared/data into opmodel op tables.

Usage: python scripts/convert_op_data.py [--shared-dir ../shared/data] [--out data/ops]

Each output row is an op-table row (docs/sweeps.md: ``name, kind, phase, tensors, attrs``) with
the measurement beside it: ``time`` [ms], ``hardware`` (an opmodel config name), ``clock_mhz``
(empty: the config's clock), ``source``, ``implementation`` (who wrote the kernel), ``label`` and
``timing_scope`` (``kernel``: Vidur's profiler kernel times; ``event``: CUDA events around each
call, Triton's ``do_bench``; opmodel.validation.timing_scope).
Numbers are copied, never edited; only rows that one kernel computes are kept (see the SOURCE.md
files for what is left out and why).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from csv_table import OP_TABLE_COLUMNS, PROFILER_US_TRUNCATION_S, TRUNCATED_OP_TABLE_COLUMNS
from liger_columns import (
    LIGER_BACKWARD_KERNELS,
    LIGER_CUTILE_BACKWARD_KERNELS,
    LIGER_CUTILE_KERNELS,
    LIGER_DTYPES,
    LIGER_GPUS,
    LIGER_KERNELS,
    backward_tensors,
    cross_entropy_columns,
    embedding_columns,
    liger_elementwise_columns,
    liger_rows,
    residual_norm_columns,
    rope_columns,
    softmax_backward_tensors,
)
from script_errors import require_sources
from vidur_layer_ops import GemmWaves, norm_columns, vidur_ops, with_attrs

VIDUR_GPUS = {"a100": "a100_80gb_sxm", "h100": "h100_sxm", "a40": "a40"}
# what the converters read under --shared-dir
VIDUR_ROOT = "vidur_profiling/data/profiling/compute"
LIGER_TABLE = "liger_kernel_benchmarks/all_benchmark_data.csv"
LIGER_CUTILE_TABLE = "liger_kernel_benchmarks/all_benchmark_data_cutile.csv"
SOURCES = (VIDUR_ROOT, LIGER_TABLE, LIGER_CUTILE_TABLE)


def _row(**values: object) -> dict[str, object]:
    return {column: values.get(column, "") for column in TRUNCATED_OP_TABLE_COLUMNS}


DO_BENCH_FLUSH_BYTES = 256 * 1024 * 1024  # the buffer Triton's do_bench writes before each call


def convert_vidur(shared: Path, out: Path, *, producer_waves: bool = False) -> None:
    """Vidur's single-kernel ops per GPU; with ``producer_waves`` each op a GEMM wrote also
    gets that GEMM's waves (:class:`GemmWaves`), an experiment the shipped tables leave out
    (docs/models/streaming.md, "Warm inputs" and "Short kernels")."""
    root = shared / VIDUR_ROOT
    for gpu, config in VIDUR_GPUS.items():
        rows = []
        waves = GemmWaves(config) if producer_waves else None
        for path in sorted((root / gpu).rglob("mlp.csv")):
            model = "/".join(path.relative_to(root / gpu).parts[:-1])
            with path.open(newline="") as handle:
                for record in csv.DictReader(handle):
                    tp = record["num_tensor_parallel_workers"]
                    for op, kind, tensors, attrs, kernel in vidur_ops(model, record, waves):
                        time = record.get(f"time_stats.{op}.median", "")
                        if not time or float(time) <= 0:
                            continue
                        rows.append(
                            _row(
                                name=op,
                                kind=kind,
                                phase="prefill",
                                tensors=tensors,
                                attrs=attrs,
                                time=time,
                                hardware=config,
                                source="vidur",
                                implementation=kernel,
                                label=f"{model}:{op}:tp{tp}:tokens{record['num_tokens']}",
                                timing_scope="kernel",  # torch.profiler kernel time
                                # whole microseconds, truncated (csv_table)
                                time_truncation_s=PROFILER_US_TRUNCATION_S,
                            )
                        )
        _write(out / "vidur" / f"vidur_{gpu}.csv", rows, TRUNCATED_OP_TABLE_COLUMNS)


def convert_liger(shared: Path, out: Path) -> None:
    """Liger-Kernel's single-kernel forward rows (``LIGER_KERNELS``) and the backward rows of
    ``LIGER_BACKWARD_KERNELS`` as ``out/liger`` op tables."""
    path = shared / LIGER_TABLE
    rows = []
    with path.open(newline="") as handle:
        for record in csv.DictReader(handle):
            key = (record["kernel_name"], record["kernel_provider"])
            config = LIGER_GPUS.get(record["gpu_name"])
            mode = record["kernel_operation_mode"]
            kernels = LIGER_BACKWARD_KERNELS if mode == "backward" else LIGER_KERNELS
            if key not in kernels or config is None or mode not in ("forward", "backward"):
                continue
            if record["metric_name"] != "speed":
                continue
            extra = json.loads(record["extra_benchmark_config_str"])
            kind, implementation = kernels[key]
            # the Megatron benchmarks build bf16 inputs and name no dtype
            dtype = LIGER_DTYPES[extra.get("dtype", "torch.bfloat16")]
            if record["kernel_name"] == "rope":
                x = int(float(record["x_value"]))
                tensors, attrs, shape = rope_columns(extra, record["x_name"], x)
            elif kind == "cross_entropy":  # B x T rows of x_value logits
                count, vocab = int(extra["B"]) * int(extra["T"]), int(float(record["x_value"]))
                tensors, attrs = cross_entropy_columns(count, vocab)
                shape = f":M{count}:V{vocab}"
            elif kind == "embedding":  # B x T token ids into a table of x_value rows of D
                count, length = int(extra["B"]) * int(extra["T"]), int(extra["D"])
                vocab = int(float(record["x_value"]))
                tensors, attrs = embedding_columns(count, vocab, length, dtype)
                shape = f":M{count}:N{length}:V{vocab}"
            else:
                length, count = int(float(record["x_value"])), liger_rows(extra)
                name = record["kernel_name"]
                if kind == "elementwise":
                    tensors, attrs = liger_elementwise_columns(
                        name, count, length, dtype, implementation
                    )
                elif name == "fused_add_rms_norm":
                    tensors, attrs = residual_norm_columns(count, length, dtype, implementation)
                else:
                    tensors, attrs = norm_columns(kind, count, length, dtype, implementation)
                shape = f":M{count}:N{length}"
            attrs = with_attrs(attrs, {"implementation": implementation})
            if mode == "backward":
                tensors = backward_tensors(count, length, dtype)
            # Triton's do_bench zeroes a 256 MiB buffer before each call to flush the L2
            # (triton/backends/nvidia/driver.py, get_empty_cache_for_benchmark / clear_cache)
            attrs = with_attrs(attrs, {"l2_dirty_bytes": DO_BENCH_FLUSH_BYTES})
            rows.append(
                _row(
                    name=record["kernel_name"],
                    kind=kind,
                    phase="train_bwd" if mode == "backward" else "train_fwd",
                    tensors=tensors,
                    attrs=attrs,
                    time=record["y_value_50"],
                    hardware=config,
                    source="liger",
                    implementation=implementation,
                    label=f"{record['kernel_name']}:{record['kernel_provider']}"
                    + (":backward" if mode == "backward" else "")
                    + shape,
                    # do_bench records CUDA events around each call (triton.testing.do_bench)
                    timing_scope="event",
                )
            )
    _write(out / "liger" / "liger.csv", rows)


def convert_liger_cutile(shared: Path, out: Path) -> None:
    """The forward rows of ``LIGER_CUTILE_KERNELS`` and the backward rows of
    ``LIGER_CUTILE_BACKWARD_KERNELS`` on the B200, as ``out/liger/liger_cutile.csv``: rows of
    ``bsz x T`` tokens (``x_value``; ``BT`` already counts the batch) of ``hidden_size``
    elements, timed by ``do_bench`` as in :func:`convert_liger`."""
    path = shared / LIGER_CUTILE_TABLE
    rows = []
    with path.open(newline="") as handle:
        for record in csv.DictReader(handle):
            key = (record["kernel_name"], record["kernel_provider"])
            backward = record["kernel_operation_mode"] == "backward"
            kernels = LIGER_CUTILE_BACKWARD_KERNELS if backward else LIGER_CUTILE_KERNELS
            if key not in kernels or record["gpu_name"] != "NVIDIA B200":
                continue
            mode = record["kernel_operation_mode"]
            if record["metric_name"] != "speed" or mode not in ("forward", "backward"):
                continue
            extra = json.loads(record["extra_benchmark_config_str"])
            kind, implementation = kernels[key]
            count = int(float(record["x_value"]))
            if record["kernel_name"] == "rope":
                tensors, attrs, shape = rope_columns(extra, record["x_name"], count)
            elif kind == "cross_entropy":  # BT rows of vocab_size logits
                vocab = int(extra["vocab_size"])
                tensors, attrs = cross_entropy_columns(count, vocab)
                shape = f":M{count}:V{vocab}"
            else:
                if record["x_name"] == "T":
                    count *= int(extra["bsz"])
                length, dtype = int(extra["hidden_size"]), LIGER_DTYPES[extra["dtype"]]
                tensors, attrs = norm_columns(kind, count, length, dtype, implementation)
                shape = f":M{count}:N{length}"
            attrs = with_attrs(attrs, {"implementation": implementation})
            if backward and kind == "layernorm":  # dx, dgamma and dbeta, as the H100's rows
                tensors = backward_tensors(count, length, dtype)
            elif backward:  # y.backward(dy) under do_bench; the multiply's 16-byte vectors:
                # a 2026 run postdates ATen's 128-bit vectorization (PR #145746, 2025)
                tensors = softmax_backward_tensors(count, length, dtype)
                attrs = with_attrs(attrs, {"aten_128bit_vectors": True})
            rows.append(
                _row(
                    name=record["kernel_name"],
                    kind=kind,
                    phase="train_bwd" if backward else "train_fwd",
                    tensors=tensors,
                    attrs=with_attrs(attrs, {"l2_dirty_bytes": DO_BENCH_FLUSH_BYTES}),
                    time=record["y_value_50"],
                    hardware="b200",
                    source="liger_cutile",
                    implementation=implementation,
                    label=f"{record['kernel_name']}:{record['kernel_provider']}"
                    + (":backward" if backward else "")
                    + shape,
                    timing_scope="event",  # do_bench: CUDA events around each call
                )
            )
    _write(out / "liger" / "liger_cutile.csv", rows)


def _write(
    path: Path, rows: list[dict[str, object]], columns: tuple[str, ...] = OP_TABLE_COLUMNS
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=columns, lineterminator="\n", extrasaction="ignore"
        )
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: {len(rows)} rows")


def main(argv: list[str] | None = None) -> int:
    """Convert Vidur's and Liger-Kernel's rows (Liger's cuTile file: its B200 rows), after
    checking every source is there."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("data/ops"))
    parser.add_argument(
        "--producer-waves",
        action="store_true",
        help="also write producer_waves (the producing GEMM's waves on each GPU, from "
        "effective_roofline) on the ops a GEMM wrote; an experiment, off in the shipped tables",
    )
    args = parser.parse_args(argv)
    require_sources("convert_op_data", args.shared_dir, SOURCES)
    convert_vidur(args.shared_dir, args.out, producer_waves=args.producer_waves)
    convert_liger(args.shared_dir, args.out)
    convert_liger_cutile(args.shared_dir, args.out)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("convert_op_data", main)
