"""Convert the public GEMM measurements in ../shared/data into opmodel's GEMM latency CSV schema.

Usage: python scripts/convert_gemm_data.py [--shared-dir ../shared/data] [--out data/gemm]

Numbers are copied, never edited: ``time`` is the source's kernel time converted to ms. The
schema (docs/validation.md, "GEMM latency data") is a superset of the EnergAIzer per-kernel CSV
columns: time [ms], batch, dimM, dimN, dimK, trans, plus dtype, compute_dtype, hardware (an
opmodel config name), clock_mhz (empty: the config's clock), source, label and optional kernel
columns (cta_tile_m, cta_tile_n, cta_tile_k, pipeline_stages, and block_size, the threads per CTA,
an EnergAIzer column) and power_state (burst for XLA's rows, each profiled alone after idle time).
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterator
from pathlib import Path

from csv_table import PROFILER_US_TRUNCATION_S
from script_errors import require_sources

from opmodel.validation.gemm_traffic import oriented_tile

COLUMNS = (
    "time",
    "batch",
    "dimM",
    "dimN",
    "dimK",
    "trans",
    "dtype",
    "compute_dtype",
    "hardware",
    "clock_mhz",
    "source",
    "label",
    "cta_tile_m",
    "cta_tile_n",
    "cta_tile_k",
    "pipeline_stages",
)
KERNEL_COLUMNS = (*COLUMNS, "block_size")  # the Rapid-LLM rows also give the threads per CTA
# XLA's profiler runs each GEMM alone between host transfers: burst power state (SOURCE.md)
XLA_COLUMNS = (*COLUMNS, "power_state")
# Vidur's profiler times are whole microseconds, truncated (csv_table.PROFILER_US_TRUNCATION_S)
VIDUR_COLUMNS = (*COLUMNS, "time_truncation_s")
VIDUR_GPUS = {"a100": "a100_80gb_sxm", "h100": "h100_sxm", "a40": "a40"}
# what the converters read under --shared-dir
VIDUR_ROOT = "vidur_profiling/data/profiling/compute"
XLA_TABLE = "xla_gpu_perf_tables/xla_matmul_perf_table.csv"
RAPID_LLM_TABLE = "rapid_llm_ncu_gemm/ncu_metrics_results.csv"
SOURCES = (VIDUR_ROOT, XLA_TABLE, RAPID_LLM_TABLE)


def _row(**values: object) -> dict[str, object]:
    columns = (*KERNEL_COLUMNS, "power_state", "time_truncation_s")
    return {column: values.get(column, "") for column in columns}


def _vidur_gemms(record: dict[str, str]) -> Iterator[tuple[str, int, int]]:
    """(label, N, K) of the four GEMMs of one Vidur layer row; M is num_tokens."""
    heads, kv_heads = int(record["n_head"]), int(record["n_kv_head"])
    embd, expanded = int(record["n_embd"]), int(record["n_expanded_embd"])
    tp = int(record["num_tensor_parallel_workers"])
    head_dim = embd // heads
    gated = record["use_gated_mlp"] == "True"
    yield "attn_pre_proj", (heads + 2 * kv_heads) * head_dim // tp, embd
    yield "attn_post_proj", embd, heads * head_dim // tp
    yield "mlp_up_proj", (2 if gated else 1) * expanded // tp, embd
    yield "mlp_down_proj", embd, expanded // tp


def convert_vidur(shared: Path, out: Path) -> None:
    root = shared / VIDUR_ROOT
    for gpu, config in VIDUR_GPUS.items():
        rows = []
        for path in sorted((root / gpu).rglob("mlp.csv")):
            model = "/".join(path.relative_to(root / gpu).parts[:-1])
            with path.open(newline="") as handle:
                for record in csv.DictReader(handle):
                    m = int(record["num_tokens"])
                    for label, n, k in _vidur_gemms(record):
                        rows.append(
                            _row(
                                time=record[f"time_stats.{label}.median"],
                                batch=1,
                                dimM=m,
                                dimN=n,
                                dimK=k,
                                trans="NT",
                                dtype="fp16",
                                hardware=config,
                                source="vidur",
                                label=f"{model}:{label}:tp{record['num_tensor_parallel_workers']}",
                                time_truncation_s=PROFILER_US_TRUNCATION_S,
                            )
                        )
        _write(out / "vidur" / f"vidur_{gpu}.csv", rows, VIDUR_COLUMNS)


XLA_GPUS = {
    "sm_90": ("h100_sxm", "xla_h100.csv"),
    "sm_100_B200": ("b200", "xla_b200.csv"),
    "gfx950": ("mi355x", "xla_mi355x.csv"),
}
# (dtype, compute dtype) of each table dtype kept. fp8 rows are left out everywhere: ~30 of the
# H100's exceed its dense fp8 peak (SOURCE.md). NVIDIA's f32 dots run as TF32 (XLA's default);
# gfx950 has no xf32 MFMA and its f32 rows reach 1,023 TFLOP/s, 6.5x the MI355X's FP32 peak, so
# XLA ran them at a lower precision that the table does not name: they are left out.
XLA_DTYPES = {
    "sm_90": {"bf16xbf16->bf16": ("bf16", ""), "f32xf32->f32": ("fp32", "tf32")},
    "sm_100_B200": {"bf16xbf16->bf16": ("bf16", ""), "f32xf32->f32": ("fp32", "tf32")},
    "gfx950": {"bf16xbf16->bf16": ("bf16", ""), "f16xf16->f16": ("fp16", "")},
}


def convert_xla(shared: Path, out: Path) -> None:
    """XLA's H100, B200 and gfx950 (MI350-class, config ``mi355x``) rows."""
    rows: dict[str, list[dict[str, object]]] = {key: [] for key in XLA_GPUS}
    with (shared / XLA_TABLE).open(newline="") as handle:
        for record in csv.DictReader(handle):
            key = record["gpu_key"]
            dtype, compute = XLA_DTYPES.get(key, {}).get(record["dtype"], ("", ""))
            if not dtype:
                continue
            rows[key].append(
                _row(
                    time=float(record["time_us"]) / 1000,
                    batch=record["b"],
                    dimM=record["m"],
                    dimN=record["n"],
                    dimK=record["k"],
                    trans="NN",
                    dtype=dtype,
                    compute_dtype=compute,
                    hardware=XLA_GPUS[key][0],
                    source="xla",
                    label=record["dtype"],
                    power_state="burst",
                )
            )
    for key, (_, name) in XLA_GPUS.items():
        _write(out / "xla" / name, rows[key], XLA_COLUMNS)


def convert_rapid_llm(shared: Path, out: Path) -> None:
    rows = []
    with (shared / RAPID_LLM_TABLE).open(newline="") as handle:
        for record in csv.DictReader(handle):
            # the tile as ncu's CTA count shows it (two rows have cta_m and cta_n swapped)
            along_m, along_n = oriented_tile(
                int(record["m"]),
                int(record["n"]),
                int(record["cta_m"]),
                int(record["cta_n"]),
                int(record["grid_size"]),
            )
            rows.append(
                _row(
                    time=record["latency_ms"],
                    batch=1,
                    dimM=record["m"],
                    dimN=record["n"],
                    dimK=record["k"],
                    trans="NN",
                    dtype="fp16",
                    hardware="a100_80gb_sxm",
                    clock_mhz=round(float(record["clock_Ghz"]) * 1000, 1),
                    source="rapid_llm",
                    label="ncu",
                    cta_tile_m=along_m,
                    cta_tile_n=along_n,
                    cta_tile_k=record["cta_k"],
                    pipeline_stages=record["stages"],
                    block_size=record["block_size"],
                )
            )
    _write(out / "rapid_llm" / "rapid_llm_a100.csv", rows, KERNEL_COLUMNS)


def _write(path: Path, rows: list[dict[str, object]], columns: tuple[str, ...] = COLUMNS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=columns, lineterminator="\n", extrasaction="ignore"
        )
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: {len(rows)} rows")


def main(argv: list[str] | None = None) -> int:
    """Convert every source, after checking they are all there."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("data/gemm"))
    args = parser.parse_args(argv)
    require_sources("convert_gemm_data", args.shared_dir, SOURCES)
    convert_vidur(args.shared_dir, args.out)
    convert_xla(args.shared_dir, args.out)
    convert_rapid_llm(args.shared_dir, args.out)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("convert_gemm_data", main)
