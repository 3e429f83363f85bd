"""MLA decode (FlashMLA, attr ``shared_kv``) against published H100 times and DeepSeek's peak.

Usage: python scripts/compare_published_mla.py [--model effective_roofline]
       [--hardware h100_sxm]

Times: the output of FlashMLA's ``tests/test_flash_mla.py`` on an H100 80GB (Modal's H100,
PyTorch 2.6.0, CUDA 12.6, FlashMLA at its 2025-02-24 release), posted in ai-bot-pro/achatbot
pull request #123 ("feat: add deepseek flash mal bench on modal H100", 2025-02-24,
https://github.com/ai-bot-pro/achatbot/pull/123) and in deepseek-ai/FlashMLA issue #19. The
test decodes batch 128 against a paged bf16 latent cache (64-token pages) of ``mean_sk`` =
4,096 tokens per request, one KV head of 576 channels, values its first 512, ``h_q`` query
heads and ``s_q`` query tokens with a causal mask, timed with ``triton.testing.do_bench``
(which zeroes a 256 MiB buffer before each run: ``l2_dirty_bytes``) around the split-KV kernel
and its combine kernel. Rows with ``varlen=False`` have every request at 4,096 tokens. The
``varlen=True`` rows draw each request's length from a normal distribution (mean 4,096,
deviation 2,048, at least ``s_q``), and the script draws the same lengths: the test seeds
Python's ``random`` with 0 once and then calls ``normalvariate`` 128 times per varlen case, in
its loop order (h_q 16, 32, 64, 128; s_q 1, 2), storing each into an int32 tensor (truncated).
The posted GB/s of each varlen row, computed by the test from its lengths' sum, is what the
drawn lengths give to within the rounding of the posted time (printed: ``GB/s posted`` and
``drawn``), so the model sees each request at its own length (attr ``kv_lengths``) in a cache
of the test's padded capacity (the longest, rounded up to 256). The posted figures have three
significant digits.

Peak: DeepSeek states up to 660 TFLOP/s for the compute-bound configurations on an H800 SXM5
whose clock throttles to about 1,600 MHz (FlashMLA README and
docs/20250422-new-kernel-deep-dive.md); the H800 has the H100 SXM5's SMs and HBM3. The script
prints the model's throughput at 1,600 MHz for h_q = 128 (DeepSeek's decode setting) beside it:
a ceiling to stay near, not a measurement per configuration.

Each case is also predicted without ``shared_kv`` (V as a separate tensor, an ordinary MQA
decode): what a user who lowers MLA's absorbed decode as plain attention would get.
Nothing is fitted.
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass

from ratio_summary import ratio_summary

from opmodel.core.attrs import AttrValue
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model

BATCH = 128
MEAN_SK = 4096
HEAD_DIM_QK = 576  # 512 latent channels + 64 rotary
HEAD_DIM_V = 512
PAGE_TOKENS = 64
DO_BENCH_FLUSH_BYTES = 256 * 2**20  # triton.testing.do_bench's cache-clearing buffer

# the test's cases at mean_sk 4,096 in its loop order; each varlen case draws 128 lengths
TEST_LOOP = tuple((heads_q, seq_q) for heads_q in (16, 32, 64, 128) for seq_q in (1, 2))
CAPACITY_ROUNDING = 256  # max_seqlen_pad = cdiv(max_seqlen, 256) * 256
# (h_q, s_q) -> GB/s the test printed for its varlen rows (ai-bot-pro/achatbot#123)
POSTED_VARLEN_GB_PER_S = {(16, 1): 2649, (16, 2): 2630, (32, 1): 2617, (32, 2): 2492, (64, 1): 2477}
# (h_q, s_q, varlen) -> ms, as posted (ai-bot-pro/achatbot#123)
PUBLISHED_H100_MS: dict[tuple[int, int, bool], float] = {
    (16, 1, False): 0.215,
    (16, 1, True): 0.231,
    (16, 2, False): 0.218,
    (16, 2, True): 0.241,
    (32, 1, False): 0.218,
    (32, 1, True): 0.246,
    (32, 2, False): 0.223,
    (32, 2, True): 0.248,
    (64, 1, False): 0.223,
    (64, 1, True): 0.246,
}
H800_PEAK_TFLOPS = 660.0  # FlashMLA README, compute-bound, H800 SXM5, CUDA 12.8
H800_CLOCK_HZ = 1.6e9  # "reducing to ~1600 MHz in our case" (the deep-dive note)


@dataclass(frozen=True, slots=True)
class Row:
    """One published case and the model's times for it."""

    heads_q: int
    seq_q: int
    varlen: bool
    published_ms: float
    predicted_ms: float
    unshared_ms: float  # the same decode without shared_kv

    @property
    def ratio(self) -> float:
        return self.predicted_ms / self.published_ms


def drawn_lengths() -> dict[tuple[int, int], tuple[int, ...]]:
    """(h_q, s_q) -> the 128 cache lengths FlashMLA's test drew for its varlen case (module
    docstring): ``random.seed(0)``, then ``max(normalvariate(4096, 2048), s_q)`` per request,
    truncated by the int32 store, case after case in the loop's order."""
    rng = random.Random(0)
    return {
        case: tuple(
            int(max(rng.normalvariate(MEAN_SK, MEAN_SK / 2), case[1])) for _ in range(BATCH)
        )
        for case in TEST_LOOP
    }


def drawn_gb_per_s(heads_q: int, seq_q: int, lengths: tuple[int, ...], ms: float) -> float:
    """The GB/s the test prints for ``lengths`` at ``ms``: its byte count, the latent cache's
    rows plus the queries and outputs, in 10^9 bytes per second."""
    queries = BATCH * seq_q * heads_q
    elements = sum(lengths) * HEAD_DIM_QK + queries * (HEAD_DIM_QK + HEAD_DIM_V)
    return 2 * elements / 1e6 / ms


def mla_decode_op(
    heads_q: int,
    seq_q: int,
    seq_kv: int = MEAN_SK,
    *,
    shared: bool = True,
    lengths: tuple[int, ...] | None = None,
) -> LocalOp:
    """The test's decode: batch 128, one latent KV head, a paged bf16 cache, causal; with
    ``lengths``, each request at its own length in a cache of the test's padded capacity."""
    attrs: dict[str, AttrValue] = {
        "shared_kv": shared,
        "causal": True,
        "page_size": PAGE_TOKENS,
        "l2_dirty_bytes": DO_BENCH_FLUSH_BYTES,
    }
    if lengths is not None:
        attrs["kv_lengths"] = tuple(lengths)
        seq_kv = -(-max(lengths) // CAPACITY_ROUNDING) * CAPACITY_ROUNDING

    def tensor(role: TensorRole, shape: tuple[int, ...], layout: str) -> TensorSpec:
        return TensorSpec(role, shape, DType.BF16, layout=layout)

    return LocalOp(
        name="mla_decode",
        kind=OpKind.ATTENTION_DECODE,
        phase=Phase.DECODE,
        tensors=(
            tensor(TensorRole.INPUT, (BATCH, heads_q, seq_q, HEAD_DIM_QK), "q"),
            tensor(TensorRole.INPUT, (BATCH, 1, seq_kv, HEAD_DIM_QK), "k"),
            tensor(TensorRole.INPUT, (BATCH, 1, seq_kv, HEAD_DIM_V), "v"),
            tensor(TensorRole.OUTPUT, (BATCH, heads_q, seq_q, HEAD_DIM_V), "o"),
        ),
        attrs=attrs,
    )


def compare(model_name: str = "effective_roofline", hardware: str = "h100_sxm") -> list[Row]:
    """Every published H100 case with the model's time, with and without ``shared_kv``."""
    model, spec = get_model(model_name), load_hardware(hardware)
    drawn = drawn_lengths()
    rows = []
    for (heads_q, seq_q, varlen), published in PUBLISHED_H100_MS.items():
        lengths = drawn[heads_q, seq_q] if varlen else None
        times = [
            model.predict(mla_decode_op(heads_q, seq_q, shared=s, lengths=lengths), spec)
            for s in (True, False)
        ]
        shared, unshared = (1e3 * p.latency_s for p in times)
        rows.append(Row(heads_q, seq_q, varlen, published, shared, unshared))
    return rows


def peak_tflops(
    model_name: str = "effective_roofline", hardware: str = "h100_sxm"
) -> list[tuple[int, int, float]]:
    """(s_q, s_k, model TFLOP/s) at h_q = 128 on ``hardware`` at the H800's throttled clock,
    FLOPs counted as the test does: ``2 b s_q s_k h_q (d_qk + d_v)``."""
    model, spec = get_model(model_name), load_hardware(hardware).at_clock(H800_CLOCK_HZ)
    points = []
    for seq_q in (1, 2):
        for seq_kv in (4096, 8192, 16384):
            op = mla_decode_op(128, seq_q, seq_kv)
            flops = 2 * BATCH * seq_q * seq_kv * 128 * (HEAD_DIM_QK + HEAD_DIM_V)
            points.append((seq_q, seq_kv, flops / model.predict(op, spec).latency_s / 1e12))
    return points


def summary(rows: list[Row]) -> tuple[int, float, float]:
    """(count, MAPE, geometric-mean ratio) of ``rows``."""
    return ratio_summary([r.ratio for r in rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="effective_roofline")
    parser.add_argument("--hardware", default="h100_sxm")
    args = parser.parse_args(argv)
    rows = compare(args.model, args.hardware)
    print(f"{args.model} on {args.hardware} / FlashMLA on an H100 (ai-bot-pro/achatbot#123)")
    print(
        f"{'h_q':>4s} {'s_q':>4s} {'varlen':>7s} {'ms':>7s} {'model':>7s} {'ratio':>6s}"
        f" {'no shared_kv':>13s}"
    )
    for r in rows:
        print(
            f"{r.heads_q:4d} {r.seq_q:4d} {r.varlen!s:>7s} {r.published_ms:7.3f}"
            f" {r.predicted_ms:7.3f} {r.ratio:6.2f} {r.unshared_ms / r.published_ms:12.2f}x"
        )
    drawn = drawn_lengths()
    print("varlen lengths drawn as the test drew them (module docstring):")
    for (heads_q, seq_q), posted in POSTED_VARLEN_GB_PER_S.items():
        ms = PUBLISHED_H100_MS[heads_q, seq_q, True]
        ours = drawn_gb_per_s(heads_q, seq_q, drawn[heads_q, seq_q], ms)
        print(f"  h_q={heads_q:3d} s_q={seq_q}: GB/s posted {posted}, drawn {ours:.0f}")
    for label, chosen in (
        ("fixed length (varlen=False)", [r for r in rows if not r.varlen]),
        ("drawn lengths (varlen=True)", [r for r in rows if r.varlen]),
        ("all rows", rows),
    ):
        n, mape, geomean = summary(chosen)
        print(f"{label:32s} n={n}  MAPE {100 * mape:4.1f} %  geomean {geomean:.3f}")
    unshared = [r.unshared_ms / r.published_ms for r in rows if not r.varlen]
    geomean = math.exp(sum(map(math.log, unshared)) / len(unshared))
    print(f"without shared_kv (varlen=False): geomean {geomean:.3f}")
    clock_mhz = H800_CLOCK_HZ / 1e6
    print(
        f"h_q = 128 at {clock_mhz:.0f} MHz (DeepSeek: up to {H800_PEAK_TFLOPS:.0f} TFLOP/s, H800)"
    )
    for seq_q, seq_kv, tflops in peak_tflops(args.model, args.hardware):
        ratio = tflops / H800_PEAK_TFLOPS
        print(f"  s_q={seq_q} s_k={seq_kv:5d}: {tflops:5.0f} TFLOP/s ({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_mla", main)
