"""Experiment (not used by the models): GEMM DRAM reads under a steady-state random-replacement
reuse model, against the 48 Nsight Compute rows of data/rapid_llm_ncu_gemm.

Usage: python scripts/traffic_reuse_experiment.py [--capacity-mib 20] [--rows]

After the first wave a GEMM's CTAs start one at a time as others finish, in launch order
(CUTLASS's identity swizzle: stripes of ``w`` N-tiles walking down M). Two CTAs ``g`` launches
apart that read the same operand panel read each slice ``g x D`` bytes of DRAM traffic apart,
``D`` being the kernel's DRAM bytes per CTA. With random replacement a re-read misses with
``p(g) = (1 - R / N) (1 - exp(-g D / C))`` (``R`` resident CTAs, ``N`` CTAs: first-wave pairs
start together). A panel fetches = ``1 + (stripes - 1) p(tiles_m w) + (tiles_n - stripes) p(1)``,
B panel fetches = ``1 + (tiles_m - 1) p(w)``, and ``D`` = (reads + C writes) / N is solved as a
fixed point. docs/validation.md reports what it gives and why it was not adopted.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from pathlib import Path

from opmodel.core.dtypes import DType
from opmodel.models.gemm.traffic import effective_swizzle, sector_rounded_bytes
from opmodel.validation.gemm_traffic import REPORTED_TO_BYTES

DATA = Path(__file__).resolve().parent.parent / "data/rapid_llm_ncu_gemm/ncu_metrics_results.csv"
FP16_BITS = 16


def predicted_read_bytes(record: dict[str, str], capacity_bytes: float) -> float:
    """DRAM read bytes of one ncu row under the model of the module docstring."""
    m, k, n = int(record["m"]), int(record["k"]), int(record["n"])
    tiles_m = math.ceil(m / int(record["cta_m"]))
    tiles_n = math.ceil(n / int(record["cta_n"]))
    a = sector_rounded_bytes(m, k, DType.FP16)  # NN: A rows of k, B rows of n contiguous
    b = sector_rounded_bytes(k, n, DType.FP16)
    c = m * n * FP16_BITS // 8
    width = effective_swizzle(8, tiles_n)  # CUTLASS's identity swizzle, as the model uses
    stripes = math.ceil(tiles_n / width)
    ctas = tiles_m * tiles_n
    waves = float(record["waves_per_sm"])
    resident = round(ctas / waves) if waves > 0 else ctas
    steady = max(0.0, 1 - resident / ctas)
    per_cta = (a + b + c) / ctas
    reads = float(a + b)
    for _ in range(50):

        def miss(gap: float, d: float = per_cta) -> float:
            return steady * (1 - math.exp(-gap * d / capacity_bytes))

        a_fetch = 1 + (stripes - 1) * miss(tiles_m * width) + (tiles_n - stripes) * miss(1)
        b_fetch = 1 + (tiles_m - 1) * miss(width)
        reads = a * a_fetch + b * b_fetch
        per_cta = (reads + c) / ctas
    return reads


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity-mib", type=float, default=20.0)
    parser.add_argument("--rows", action="store_true", help="print every row")
    args = parser.parse_args()
    if not 0 < args.capacity_mib < math.inf:
        parser.error(f"--capacity-mib must be a finite number > 0 (got {args.capacity_mib})")
    errors = []
    with DATA.open(newline="") as handle:
        for record in csv.DictReader(handle):
            predicted = predicted_read_bytes(record, args.capacity_mib * 2**20)
            error = predicted / (float(record["dram_read"]) * REPORTED_TO_BYTES) - 1
            errors.append(abs(error))
            if args.rows:
                print(f"{record['m']:>6} {record['k']:>6} {record['n']:>6} {100 * error:+7.1f} %")
    within = sum(1 for e in errors if e <= 0.10)
    print(
        f"C = {args.capacity_mib:g} MiB: median |error| {100 * statistics.median(errors):.1f} %, "
        f"mean {100 * statistics.fmean(errors):.1f} %, {within} of {len(errors)} within 10 %"
    )
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("traffic_reuse_experiment", main)
