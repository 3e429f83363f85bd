"""Experiment (not used by the models): simulate a tiled GEMM's CTA schedule over an L2 and count
DRAM reads, against the 48 Nsight Compute rows of data/rapid_llm_ncu_gemm.

Usage: python scripts/traffic_schedule_simulation.py [--policy lru|random] [--jitter J]
           [--capacity-mib 20] [--max-steps 3000000] [--rows]

Each SM holds ``slots`` CTAs (the row's theoretical warps over its warps per CTA); a slot runs
CTAs back to back in the launch order of CUTLASS's identity swizzle (stripes of ``w`` N-tiles
walking down M). A CTA's K loop is ``ceil(K / cta_k)`` steps; each step reads one A block
(``cta_m x cta_k``) and one B block (``cta_k x cta_n``) and takes one time unit plus Gaussian
noise of standard deviation ``jitter`` (0: every slot stays in lockstep, the waves of the
analytic model; more: the slots drift apart as real CTAs do). The L2 holds ``capacity`` bytes of
blocks under LRU or random replacement; a miss reads the block from DRAM. Rows are skipped when
their CTAs x steps exceed ``--max-steps`` (Python is slow) or n = 1. The seed is fixed, so a
run prints the same figures every time. docs/validation.md reports what it gives.
"""

from __future__ import annotations

import argparse
import csv
import heapq
import math
import random
import statistics
import sys
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from opmodel.models.gemm.traffic import effective_swizzle
from opmodel.validation.gemm_traffic import REPORTED_TO_BYTES

DATA = Path(__file__).resolve().parent.parent / "data/rapid_llm_ncu_gemm/ncu_metrics_results.csv"
FP16_BYTES = 2
SMS = 108  # A100-SXM4-80GB, the GPU of the ncu rows

Block = tuple[str, int, int]  # (operand, panel, K step)


class L2:
    """An L2 of ``capacity`` bytes of variable-size blocks under LRU or random replacement."""

    def __init__(self, capacity: int, policy: str, rng: random.Random) -> None:
        if policy not in ("lru", "random"):
            raise ValueError(f"policy must be 'lru' or 'random' (got {policy!r})")
        self.capacity, self.policy, self.rng, self.used = capacity, policy, rng, 0
        self.lru: OrderedDict[Block, int] = OrderedDict()
        self.keys: list[Block] = []
        self.where: dict[Block, int] = {}
        self.sizes: dict[Block, int] = {}

    def read(self, block: Block, size: int) -> bool:
        """True on a hit; on a miss the block is inserted, evicting others to make room."""
        if self.policy == "lru":
            if block in self.lru:
                self.lru.move_to_end(block)
                return True
            self.lru[block] = size
            self.used += size
            while self.used > self.capacity:
                self.used -= self.lru.popitem(last=False)[1]
            return False
        if block in self.where:
            return True
        while self.keys and self.used + size > self.capacity:
            self._evict_random()
        self.where[block] = len(self.keys)
        self.keys.append(block)
        self.sizes[block] = size
        self.used += size
        return False

    def _evict_random(self) -> None:
        index = self.rng.randrange(len(self.keys))
        victim, last = self.keys[index], self.keys[-1]
        self.keys[index] = last
        self.where[last] = index
        self.keys.pop()
        del self.where[victim]
        self.used -= self.sizes.pop(victim)


@dataclass(frozen=True, slots=True, kw_only=True)
class Kernel:
    """One profiled GEMM: problem, CTA tile and resident CTAs per SM."""

    m: int
    n: int
    k: int
    cta_m: int
    cta_n: int
    cta_k: int
    slots_per_sm: int


def launch_order(kernel: Kernel) -> Iterator[tuple[int, int]]:
    """(M tile, N tile) of each CTA in launch order: stripes of ``w`` N tiles walking down M."""
    tiles_m, tiles_n = -(-kernel.m // kernel.cta_m), -(-kernel.n // kernel.cta_n)
    width = effective_swizzle(8, tiles_n)
    for stripe in range(-(-tiles_n // width)):
        for tile_m in range(tiles_m):
            for offset in range(width):
                tile_n = stripe * width + offset
                if tile_n < tiles_n:
                    yield tile_m, tile_n


def simulate_dram_reads(kernel: Kernel, l2: L2, jitter: float, rng: random.Random) -> int:
    """DRAM bytes read by ``kernel`` over ``l2`` (module docstring)."""
    steps = -(-kernel.k // kernel.cta_k)
    a_block = kernel.cta_m * kernel.cta_k * FP16_BYTES
    b_block = kernel.cta_k * kernel.cta_n * FP16_BYTES
    order = launch_order(kernel)
    running: dict[int, tuple[int, int, int]] = {}  # slot -> (M tile, N tile, step)
    events: list[tuple[float, int]] = []
    for slot in range(SMS * kernel.slots_per_sm):
        cta = next(order, None)
        if cta is None:
            break
        running[slot] = (*cta, 0)
        events.append((slot * 1e-6, slot))  # start together, in launch order
    heapq.heapify(events)
    dram = 0
    while events:
        time, slot = heapq.heappop(events)
        tile_m, tile_n, step = running[slot]
        dram += 0 if l2.read(("A", tile_m, step), a_block) else a_block
        dram += 0 if l2.read(("B", tile_n, step), b_block) else b_block
        if step + 1 < steps:
            running[slot] = (tile_m, tile_n, step + 1)
        else:
            cta = next(order, None)
            if cta is None:
                del running[slot]
                continue
            running[slot] = (*cta, 0)
        heapq.heappush(events, (time + max(0.05, 1.0 + rng.gauss(0.0, jitter)), slot))
    return dram


def kernel_of(record: dict[str, str]) -> Kernel:
    """The ncu row's kernel; resident CTAs = theoretical warps per SM / warps per CTA."""
    return Kernel(
        m=int(record["m"]),
        n=int(record["n"]),
        k=int(record["k"]),
        cta_m=int(record["cta_m"]),
        cta_n=int(record["cta_n"]),
        cta_k=int(record["cta_k"]),
        slots_per_sm=max(
            1, int(float(record["theoretical_warps_per_sm"])) // (int(record["block_size"]) // 32)
        ),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", choices=("lru", "random"), default="random")
    parser.add_argument("--jitter", type=float, default=0.0)
    parser.add_argument("--capacity-mib", type=float, default=20.0)
    parser.add_argument("--max-steps", type=float, default=3e6)
    parser.add_argument("--rows", action="store_true", help="print every row")
    args = parser.parse_args()
    if not 0 <= args.jitter < math.inf:
        parser.error(f"--jitter must be a finite number >= 0 (got {args.jitter})")
    if not 0 < args.capacity_mib < math.inf:
        parser.error(f"--capacity-mib must be a finite number > 0 (got {args.capacity_mib})")
    if not args.max_steps > 0:
        parser.error(f"--max-steps must be > 0 (got {args.max_steps})")
    errors = []
    with DATA.open(newline="") as handle:
        for record in csv.DictReader(handle):
            kernel = kernel_of(record)
            ctas = -(-kernel.m // kernel.cta_m) * -(-kernel.n // kernel.cta_n)
            if kernel.n == 1 or ctas * math.ceil(kernel.k / kernel.cta_k) > args.max_steps:
                continue
            rng = random.Random(1)
            l2 = L2(int(args.capacity_mib * 2**20), args.policy, rng)
            dram = simulate_dram_reads(kernel, l2, args.jitter, rng)
            error = dram / (float(record["dram_read"]) * REPORTED_TO_BYTES) - 1
            errors.append(abs(error))
            if args.rows:
                row = f"{kernel.m:>6} {kernel.k:>6} {kernel.n:>6}"
                print(f"{row} {100 * error:+7.1f} %", flush=True)
    if not errors:
        sys.exit(f"traffic_schedule_simulation: no row within --max-steps {args.max_steps:g}")
    within = sum(1 for e in errors if e <= 0.10)
    print(
        f"{args.policy}, jitter {args.jitter:g}, C = {args.capacity_mib:g} MiB: "
        f"median |error| {100 * statistics.median(errors):.1f} %, "
        f"mean {100 * statistics.fmean(errors):.1f} %, {within} of {len(errors)} within 10 %"
    )
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("traffic_schedule_simulation", main)
