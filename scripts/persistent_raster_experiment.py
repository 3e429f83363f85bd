"""Experiment (not used by the models): DRAM reads of cuBLAS's persistent sm_90 GEMM kernels on
an H200 against a round-by-round count of the panels they touch.

Usage: python scripts/persistent_raster_experiment.py [--data-dir data/measured]
       [--swizzle heuristic|1|2|4|8] [--raster m|cutlass3] [--lru] [--rows]

Rows: every GEMM of at least 1e11 FLOP in ``*/ncu_kernels.csv`` that ran one ``nvjet_sm90_*``
kernel (cuBLAS's persistent warp-specialised kernels; 230 in this project's H200 folders), with
ncu's ``dram__bytes_read.sum`` under cold caches.

The count: the kernel's grid of ``G`` CTAs (128-132, ncu's ``grid``) works through the output
tiles in rounds of ``G``. Tiles follow CUTLASS 3's persistent scheduler along M: stripes of
``S`` N-tiles, M fastest inside a stripe (``get_work_idx_m_and_n``; ``S = 2^s`` from CUTLASS's
``get_log_swizzle_size`` on ``min(tiles_m, tiles_n)`` with at most 8, or ``--swizzle``). Each
round reads every A row panel and B column panel its tiles touch once, over the whole K, and
nothing survives in L2 from one round to the next. The tile is the kernel's own: nvjet names it
in cuBLAS's column-major orientation, where PyTorch's row-major GEMM runs as ``C^T = B^T A^T``,
so ``nvjet_sm90_tst_256x128_*`` is 128 rows of PyTorch's M by 256 columns of N.

It prints, per tile family and K, how many rows the count puts within 10 % of ncu, next to
``effective_roofline``'s own traffic model (its tile, CUTLASS 2's stripes, L2 survival between
stripes and waves by a capacity ramp) on the same rows; ``--lru`` gives the model a
least-recently-used step in place of the ramp (``1`` when the reuse distance exceeds the L2's
shared capacity, ``0`` otherwise) and also prints the A100's 48 Rapid-LLM rows under it.
docs/validation.md ("GEMM DRAM traffic") reports what this finds and why the model keeps its
law.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import opmodel.models.gemm.traffic as gemm_traffic_module
from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.measure.grid import load_grid, shipped_grid_names
from opmodel.measure.plan import expand
from opmodel.models import get_model
from opmodel.parsing.csvfile import read_csv_rows
from opmodel.validation.gemm_traffic import compare_dram_bytes, summarize

ROOT = Path(__file__).resolve().parent.parent
MIN_FLOP = 1e11
_LABEL = re.compile(r"^gemm (\w+) m=(\d+) n=(\d+) k=(\d+) (N|T)(N|T)$")
_NVJET = re.compile(r"^nvjet_sm90_[a-z]+_(\d+)x(\d+)_")
_ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4}
_KERNEL_COLUMNS = (
    "index",
    "kernel",
    "grid",
    "dram__bytes_read.sum",
    "sm__cycles_elapsed.avg.per_second",
)


@dataclass(frozen=True, slots=True)
class PersistentRow:
    """One profiled GEMM: problem, the kernel's tile (PyTorch orientation), grid and reads."""

    folder: str
    label: str
    m: int
    n: int
    k: int
    element_bytes: int
    tile_m: int
    tile_n: int
    family: str  # the kernel's tile as nvjet names it
    grid_ctas: int
    measured_read_bytes: float
    clock_hz: float  # the SM clock ncu saw


def cutlass_log_swizzle(tiles_m: int, tiles_n: int, max_swizzle: int = 8) -> int:
    """CUTLASS 3's ``get_log_swizzle_size``: 3 when the smaller tile count is >= 6, 2 when
    >= 3, 1 when >= 2, else 0 (capped by ``max_swizzle``)."""
    smaller = min(tiles_m, tiles_n)
    if max_swizzle >= 8 and smaller >= 6:
        return 3
    if max_swizzle >= 4 and smaller >= 3:
        return 2
    return 1 if max_swizzle >= 2 and smaller >= 2 else 0


def tile_order(tiles_m: int, tiles_n: int, log_swizzle: int) -> list[tuple[int, int]]:
    """(m, n) tile indices in the order a CUTLASS 3 persistent scheduler rastering along M hands
    them out: stripes of ``2^s`` N-tiles, the swizzle offset fastest, then M, then the stripe."""
    width = 1 << log_swizzle
    order = []
    for work in range(tiles_m * width * math.ceil(tiles_n / width)):
        offset = work & (width - 1)
        stripe, m = divmod(work >> log_swizzle, tiles_m)
        n = stripe * width + offset
        if n < tiles_n:
            order.append((m, n))
    return order


def round_read_bytes(row: PersistentRow, log_swizzle: int, *, along_n: bool = False) -> float:
    """DRAM reads when each round of ``grid_ctas`` tiles reads its distinct panels once and
    nothing survives between rounds (module docstring); ``along_n``: raster along N instead
    (stripes of M tiles, N fastest)."""
    tiles_m = math.ceil(row.m / row.tile_m)
    tiles_n = math.ceil(row.n / row.tile_n)
    if along_n:
        order = [(m, n) for n, m in tile_order(tiles_n, tiles_m, log_swizzle)]
    else:
        order = tile_order(tiles_m, tiles_n, log_swizzle)
    rows_read = 0
    for start in range(0, len(order), row.grid_ctas):
        chunk = order[start : start + row.grid_ctas]
        rows_read += sum(min(row.tile_m, row.m - m * row.tile_m) for m in {m for m, _ in chunk})
        rows_read += sum(min(row.tile_n, row.n - n * row.tile_n) for n in {n for _, n in chunk})
    return float(rows_read * row.k * row.element_bytes)


def load_rows(data_dir: Path) -> list[PersistentRow]:
    """The large single-kernel nvjet GEMMs of every ncu folder under ``data_dir``."""
    out = []
    for kernels_csv in sorted(data_dir.glob("*/ncu_kernels.csv")):
        by_index: dict[str, list[dict[str, str]]] = defaultdict(list)
        for record in read_csv_rows(kernels_csv, _KERNEL_COLUMNS):
            by_index[record["index"]].append(record)
        for record in read_csv_rows(kernels_csv.parent / "ncu_labels.csv", ("index", "label")):
            label = _LABEL.match(record["label"])
            kernels = by_index.get(record["index"], [])
            if label is None or len(kernels) != 1 or label[1] not in _ELEMENT_BYTES:
                continue
            tile = _NVJET.match(kernels[0]["kernel"])
            m, n, k = int(label[2]), int(label[3]), int(label[4])
            if tile is None or 2 * m * n * k < MIN_FLOP:
                continue
            grid = [int(x) for x in re.findall(r"\d+", kernels[0]["grid"])]
            out.append(
                PersistentRow(
                    folder=kernels_csv.parent.name,
                    label=record["label"],
                    m=m,
                    n=n,
                    k=k,
                    element_bytes=_ELEMENT_BYTES[label[1]],
                    # cuBLAS's column-major tile: its first extent runs along PyTorch's N
                    tile_m=int(tile[2]),
                    tile_n=int(tile[1]),
                    family=f"{tile[1]}x{tile[2]}",
                    grid_ctas=math.prod(grid),
                    measured_read_bytes=float(kernels[0]["dram__bytes_read.sum"]),
                    clock_hz=float(kernels[0]["sm__cycles_elapsed.avg.per_second"]),
                )
            )
    if not out:
        raise ConfigError([f"{data_dir}: no large nvjet GEMM in */ncu_kernels.csv"])
    return out


def _lru_step(reuse_distance_bytes: float, l2_bytes: int) -> float:
    return 1.0 if reuse_distance_bytes > l2_bytes else 0.0


def model_read_bytes(rows: list[PersistentRow]) -> list[float]:
    """``effective_roofline``'s predicted DRAM reads of each row's op (the shipped measure
    grids' op for its label) on ``h200_sxm`` at the clock ncu saw."""
    cases = {c.label: c for name in shipped_grid_names() for c in expand(load_grid(name))}
    spec = load_hardware("h200_sxm")
    model = get_model("effective_roofline")
    out = []
    for row in rows:
        case = cases.get(row.label)
        if case is None:
            raise ConfigError([f"{row.folder}: case {row.label!r} is in no shipped grid"])
        hbm = model.predict(case.op(), spec.at_clock(row.clock_hz)).traffic.get("hbm")
        out.append(float(hbm.read_bytes) if hbm else math.nan)
    return out


def _line(name: str, ratios: list[float]) -> str:
    within = sum(abs(x - 1) < 0.1 for x in ratios)
    median = statistics.median(abs(x - 1) for x in ratios)
    geo = math.exp(statistics.fmean(math.log(x) for x in ratios))
    return f"{name:22s} {len(ratios):4d} {within:7d} {median:8.1%} {geo:8.2f}"


def _ratios(
    rows: list[PersistentRow], swizzle: str, raster: str, *, show_rows: bool
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per group (``all`` and each family and K), the counted and the modelled DRAM reads over
    ncu's, the count under ``swizzle`` (``heuristic`` or a fixed 1-8) and ``raster``."""
    counted: dict[str, list[float]] = defaultdict(list)
    modelled: dict[str, list[float]] = defaultdict(list)
    fixed = {"1": 0, "2": 1, "4": 2, "8": 3}
    for row, model_bytes in zip(rows, model_read_bytes(rows), strict=True):
        tiles_m, tiles_n = math.ceil(row.m / row.tile_m), math.ceil(row.n / row.tile_n)
        log_swizzle = fixed.get(swizzle, cutlass_log_swizzle(tiles_m, tiles_n))
        along_n = raster == "cutlass3" and tiles_n <= tiles_m
        ratio = round_read_bytes(row, log_swizzle, along_n=along_n) / row.measured_read_bytes
        model_ratio = model_bytes / row.measured_read_bytes
        for key in ("all", f"{row.family} k={row.k}"):
            counted[key].append(ratio)
            modelled[key].append(model_ratio)
        if show_rows:
            print(f"{row.label:40s} {row.family:8s} count {ratio:5.2f}  model {model_ratio:5.2f}")
    return counted, modelled


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data/measured")
    parser.add_argument("--swizzle", default="heuristic", choices=["heuristic", "1", "2", "4", "8"])
    parser.add_argument(
        "--raster",
        default="m",
        choices=["m", "cutlass3"],
        help="m: along M always; cutlass3: along N unless tiles_n > tiles_m (CUTLASS 3)",
    )
    parser.add_argument("--lru", action="store_true", help="the model with an LRU step")
    parser.add_argument("--rows", action="store_true", help="print every row")
    args = parser.parse_args(argv)
    if args.lru:
        patched: Callable[[float, int], float] = _lru_step
        gemm_traffic_module.capacity_miss_fraction = patched  # type: ignore[assignment]
    rows = load_rows(args.data_dir)
    counted, modelled = _ratios(rows, args.swizzle, args.raster, show_rows=args.rows)
    law = "LRU step" if args.lru else "capacity ramp"
    print(
        f"DRAM reads / ncu on {len(rows)} large nvjet GEMMs (H200); swizzle {args.swizzle}, "
        f"raster {args.raster}"
    )
    print(f"{'group':22s} {'n':>4s} {'<=10%':>7s} {'median':>8s} {'geomean':>8s}")
    for key in sorted(counted, key=lambda k: (k != "all", k)):
        print(_line(f"count  {key}", counted[key]))
        print(_line(f"model  {key}", modelled[key]))
    print(f"(model: effective_roofline's traffic, L2 survival by the {law})")
    if args.lru:
        summary = summarize(compare_dram_bytes(ROOT / "data"))
        print(
            f"A100 Rapid-LLM rows with the LRU step: {summary.within_10_percent} of "
            f"{summary.rows} within 10 %, median |error| {summary.median_abs_read_error:.1%}"
        )
    return 0


if __name__ == "__main__":
    import script_errors

    script_errors.run("persistent_raster_experiment", main)
