"""FlashMLA at 128 query heads (compute-bound) against published H100 times of random lengths.

Usage: python scripts/compare_published_mla_compute.py [--model effective_roofline]
       [--hardware h100_sxm] [--draws 15] [--clock-mhz F]

Times: FlashAttention pull request #1770 (Dao-AILab/flash-attention, "add var_len case for
benchmark_mla_decode", 2025-07-22), the output of ``hopper/benchmark_mla_decode.py`` with its
var_len case on an H100: batch 128, one query token, 128 query heads on one latent KV head
(576 channels, values its first 512: FlashMLA's ``kv_cache_concat``), 64-token pages, causal,
timed with Triton's ``do_bench`` (its 256 MiB flush: ``l2_dirty_bytes``) around
``flash_mla_with_kvcache`` alone (the metadata is computed outside). At ``seqlen`` s, each
request's length is ``max(normalvariate(s, s / 2), 1)`` from an unseeded ``random``, so the
lengths are unknown; the post gives their sum (``total_seqlens``) and maximum. At 128 heads
and one KV head the query blocks are two, FlashMLA has 66 parts, and the arithmetic intensity
is 195-238 FLOP per byte: the kernel is compute-bound on an H100 (the posted 339-613 TFLOP/s).

The script draws 128 lengths from the same distribution with seeds 0, 1, 2, ... and keeps
the first ``--draws`` whose sum is within 1 % of the posted total and whose maximum is within
5 % of the posted maximum (the busiest of FlashMLA's parts depends on the lengths, not only on
their sum); the model predicts each kept draw (attr ``kv_lengths``, the cache padded to the
longest rounded up to 256 as the benchmark does) and the script prints the median, lowest
and highest ratio to the posted time. The FA3 times of the same post run FA3's ``qv`` path
(scores ``q k^T + qv v^T`` over separate 64- and 512-channel caches), which an attention op
does not express; they are printed, not compared. The post does not give the H100's clock;
``--clock-mhz`` runs the model at a given SM clock instead of the config's (DeepSeek reports
its H800, the same SMs and 700 W limit, throttling to about 1,600 MHz under FlashMLA's
compute-bound setting). Nothing is fitted.
"""

from __future__ import annotations

import argparse
import random
import statistics
from dataclasses import dataclass

from compare_published_mla import mla_decode_op
from ratio_summary import ratio_summary

from opmodel.hardware import load_hardware
from opmodel.models import get_model

BATCH = 128
HEADS_Q = 128
MIN_LENGTH = 1  # seqlen_q
# seqlen -> (total_seqlens, max_seqlen, FlashMLA us, FA3 us), as posted in #1770
PUBLISHED: dict[int, tuple[int, int, float, float]] = {
    1024: (130864, 2358, 107.6, 131.5),
    2048: (274227, 4696, 175.2, 211.9),
    4096: (539326, 9155, 292.9, 363.3),
    8192: (1040384, 17609, 505.0, 664.7),
    16384: (2123978, 37079, 964.3, 1398.0),
}
TOTAL_TOLERANCE = 0.01
MAX_TOLERANCE = 0.05


@dataclass(frozen=True, slots=True)
class Row:
    """One posted setting and the model's ratios over the kept draws."""

    seqlen: int
    published_us: float
    fa3_us: float
    ratios: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)


def conditioned_draws(seqlen: int, count: int, max_seeds: int = 5000) -> list[tuple[int, ...]]:
    """The first ``count`` seeded draws of 128 lengths whose sum and maximum match the post's
    (module docstring)."""
    total, longest, _, _ = PUBLISHED[seqlen]
    kept: list[tuple[int, ...]] = []
    for seed in range(max_seeds):
        rng = random.Random(seed)
        lengths = tuple(
            int(max(rng.normalvariate(seqlen, seqlen / 2), MIN_LENGTH)) for _ in range(BATCH)
        )
        if abs(sum(lengths) / total - 1) <= TOTAL_TOLERANCE and (
            abs(max(lengths) / longest - 1) <= MAX_TOLERANCE
        ):
            kept.append(lengths)
            if len(kept) == count:
                break
    return kept


def compare(
    model_name: str = "effective_roofline",
    hardware: str = "h100_sxm",
    draws: int = 15,
    clock_hz: float | None = None,
) -> list[Row]:
    """Every posted setting with the model's ratio on each kept draw (at ``clock_hz`` when
    given)."""
    model, spec = get_model(model_name), load_hardware(hardware)
    if clock_hz is not None:
        spec = spec.at_clock(clock_hz)
    rows = []
    for seqlen, (_, _, flashmla_us, fa3_us) in PUBLISHED.items():
        ratios = tuple(
            model.predict(mla_decode_op(HEADS_Q, 1, lengths=lengths), spec).latency_s
            * 1e6
            / flashmla_us
            for lengths in conditioned_draws(seqlen, draws)
        )
        rows.append(Row(seqlen, flashmla_us, fa3_us, ratios))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="effective_roofline")
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--draws", type=int, default=15)
    parser.add_argument("--clock-mhz", type=float, default=None)
    args = parser.parse_args(argv)
    if args.draws < 1:
        raise SystemExit(f"--draws must be at least 1 (got {args.draws})")
    if args.clock_mhz is not None and not args.clock_mhz > 0:
        raise SystemExit(f"--clock-mhz must be positive (got {args.clock_mhz})")
    clock_hz = None if args.clock_mhz is None else args.clock_mhz * 1e6
    rows = compare(args.model, args.hardware, args.draws, clock_hz)
    at = "" if clock_hz is None else f" at {args.clock_mhz:.0f} MHz"
    print(f"{args.model} on {args.hardware}{at} / FlashMLA, 128 heads, H100 (flash-attention#1770)")
    print(
        f"{'seqlen':>7s} {'FlashMLA us':>12s} {'draws':>6s} {'median':>7s} {'range':>12s}  FA3 us"
    )
    for r in rows:
        spread = f"{min(r.ratios):.2f}-{max(r.ratios):.2f}"
        print(
            f"{r.seqlen:7d} {r.published_us:12.1f} {len(r.ratios):6d} {r.median:7.2f}"
            f" {spread:>12s}  {r.fa3_us:6.1f}"
        )
    medians = [r.median for r in rows]
    _, mape, _ = ratio_summary(medians)
    print(f"median ratios: {min(medians):.2f}-{max(medians):.2f}, MAPE {100 * mape:.1f} %")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_mla_compute", main)
