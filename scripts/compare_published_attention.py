"""Attention prefill and its backward pass against published H100 throughput: FA3 and cuDNN.

Usage: python scripts/compare_published_attention.py [--model effective_roofline]
       [--hardware h100_sxm]

The figures are the forward-pass TFLOP/s printed above the bars of Fig. 5 of Shah et al.,
"FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision" (arXiv
2407.08608, 2024): H100 80GB SXM5, FP16, batch x sequence = 16,384 tokens and heads x head_dim
= 2,048, sequence lengths 512 to 16k, head_dim 64, 128 and 256, with and without a causal mask
(causal FLOPs counted as half of the full ones, the paper's convention). The clock is not
given; the model runs the config at its own clock law. cuDNN's kernels are not FlashAttention
and the model has no cuDNN kernel: that series shows how far it is from another
implementation, not a validation. The figure's FlashAttention-2 bars (its sm_80 kernels on
the H100, warp-level ``mma.sync``) run the op with attr ``attention_kernel: fa2``; their
values were read from transcriptions of the figure's six panels whose FA3 and cuDNN values
are the ones above, bar for bar. Nothing is fitted.

The backward pass: Fig. 6 of the same paper, the same shapes without a causal mask, head_dim
64 and 128, FLOPs counted as 2.5 times the forward's (the five GEMMs of the backward against
the forward's two). The model runs the op's backward (phase ``train_bwd`` with a ``grad`` dO;
docs/models/attention.md, "Backward pass"): FA3's backward kernel with its preprocess and
postprocess, which the published times include.

FP8: Fig. 7 of the same paper, FA3's forward pass with Q, K and V in FP8 (e4m3) and the output
in BF16, the same shapes. Its values were read from transcriptions of the figure's panels
(Triton, cuDNN and FA3 bars; FA3's are used): five of the six, every panel but the causal
head_dim 64 one, whose transcription stops after 1k tokens. Which panel has the mask is not in
the transcriptions' titles; the panel of each head_dim with the lower throughput at 512 tokens
is taken as the causal one, as in Fig. 5, where the mask roughly halves FA3's rate at 512
tokens. The model runs FP8 attention as the BF16 one with the FP8 tensor rate, the FP8
power-limited clock and one-byte operands (docs/models/attention.md, "Not modelled yet").

Printed per series (pass, implementation, mask, head_dim): the ratio predicted / published
TFLOP/s at each sequence length, then MAPE and geometric-mean ratio per pass and
implementation, overall and from 4k tokens up.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ratio_summary import ratio_summary

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model

SEQUENCES = (512, 1024, 2048, 4096, 8192, 16384)
TOKENS = 16384  # batch x sequence in every case of the figure
WIDTH = 2048  # heads x head_dim

# (implementation, causal, head_dim) -> TFLOP/s at SEQUENCES, as printed in Fig. 5
PUBLISHED: dict[tuple[str, bool, int], tuple[float, ...]] = {
    ("fa3", False, 64): (333, 392, 460, 476, 496, 497),
    ("fa3", False, 128): (467, 565, 625, 638, 646, 648),
    ("fa3", False, 256): (482, 639, 707, 736, 746, 756),
    ("fa3", True, 64): (197, 265, 371, 420, 460, 473),
    ("fa3", True, 128): (292, 423, 521, 579, 602, 616),
    ("fa3", True, 256): (286, 427, 537, 612, 628, 642),
    ("cudnn", False, 64): (335, 373, 395, 408, 412, 413),
    ("cudnn", False, 128): (497, 574, 617, 609, 600, 595),
    ("cudnn", False, 256): (470, 546, 580, 581, 580, 581),
    ("cudnn", True, 64): (225, 288, 334, 363, 379, 388),
    ("cudnn", True, 128): (315, 410, 484, 518, 529, 539),
    ("cudnn", True, 256): (308, 391, 450, 483, 497, 509),
    ("fa2", False, 64): (282, 306, 318, 321, 322, 324),
    ("fa2", False, 128): (309, 350, 362, 368, 370, 370),
    ("fa2", False, 256): (275, 313, 321, 323, 324, 326),
    ("fa2", True, 64): (180, 229, 262, 284, 295, 299),
    ("fa2", True, 128): (191, 260, 298, 319, 333, 335),
    ("fa2", True, 256): (208, 251, 278, 293, 297, 298),
}
# the implementations the model runs as such (attr attention_kernel); cuDNN's run as the default
KERNEL_ATTR = {"fa2": "fa2", "fa3": "fa3"}
# (implementation, causal, head_dim) -> backward TFLOP/s at SEQUENCES, as printed in Fig. 6
PUBLISHED_BACKWARD: dict[tuple[str, bool, int], tuple[float, ...]] = {
    ("fa3", False, 64): (272, 363, 422, 453, 472, 474),
    ("fa3", False, 128): (316, 424, 501, 542, 559, 561),
    ("cudnn", False, 64): (266, 348, 395, 417, 432, 433),
    ("cudnn", False, 128): (305, 408, 465, 499, 518, 516),
}
BACKWARD_FLOPS_FACTOR = 2.5  # the backward's five GEMMs against the forward's two
# (implementation, causal, head_dim) -> FP8 forward TFLOP/s at SEQUENCES, as printed in Fig. 7
PUBLISHED_FP8: dict[tuple[str, bool, int], tuple[float, ...]] = {
    ("fa3", False, 64): (240, 396, 462, 568, 596, 613),
    ("fa3", False, 128): (348, 596, 733, 918, 974, 1008),
    ("fa3", False, 256): (510, 744, 931, 966, 1151, 1171),
    ("fa3", True, 128): (241, 367, 553, 716, 815, 881),
    ("fa3", True, 256): (329, 521, 703, 856, 960, 1024),
}


@dataclass(frozen=True, slots=True)
class Point:
    """One published case and the model's throughput for it."""

    implementation: str
    causal: bool
    head_dim: int
    seq: int
    published_tflops: float
    predicted_tflops: float
    backward: bool = False
    fp8: bool = False

    @property
    def ratio(self) -> float:
        return self.predicted_tflops / self.published_tflops


def attention_op(
    seq: int, head_dim: int, *, causal: bool, backward: bool = False, kernel: str | None = None
) -> LocalOp:
    """The figure's fp16 attention at sequence ``seq``: 16,384 / seq sequences, 2,048 / head_dim
    heads; its backward pass (reads Q, K, V, O and dO, writes dQ, dK, dV) when ``backward``."""
    batch, heads = TOKENS // seq, WIDTH // head_dim
    shape = (batch, heads, seq, head_dim)

    def tensor(role: TensorRole, layout: str) -> TensorSpec:
        return TensorSpec(role, shape, DType.FP16, layout=layout)

    if backward:
        tensors = (
            *(tensor(TensorRole.INPUT, layout) for layout in "qkvo"),
            tensor(TensorRole.GRAD, "o"),
            *(tensor(TensorRole.OUTPUT, layout) for layout in "qkv"),
        )
    else:
        tensors = (
            *(tensor(TensorRole.INPUT, layout) for layout in "qkv"),
            tensor(TensorRole.OUTPUT, "o"),
        )
    return LocalOp(
        name="attention",
        kind=OpKind.ATTENTION_PREFILL,
        phase=Phase.TRAIN_BWD if backward else Phase.INFERENCE,
        tensors=tensors,
        attrs={"causal": causal} | ({"attention_kernel": kernel} if kernel else {}),
    )


# (published figures, backward pass, fp8) in the order the script prints them
SETS = ((PUBLISHED, False, False), (PUBLISHED_BACKWARD, True, False), (PUBLISHED_FP8, False, True))


def fp8_op(op: LocalOp) -> LocalOp:
    """``op`` as Fig. 7 runs it: Q, K and V in e4m3, the output in bf16."""
    tensors = tuple(
        TensorSpec(
            t.role,
            t.shape,
            DType.FP8_E4M3 if t.role is TensorRole.INPUT else DType.BF16,
            layout=t.layout,
        )
        for t in op.tensors
    )
    return LocalOp(name=op.name, kind=op.kind, phase=op.phase, tensors=tensors, attrs=op.attrs)


def compare(model_name: str = "effective_roofline", hardware: str = "h100_sxm") -> list[Point]:
    """Every published point, forward, backward and FP8 forward, with the model's TFLOP/s (the
    paper's FLOP count)."""
    model, spec = get_model(model_name), load_hardware(hardware)
    points = []
    for published, backward, fp8 in SETS:
        factor = BACKWARD_FLOPS_FACTOR if backward else 1.0
        for (implementation, causal, head_dim), values in published.items():
            for seq, value in zip(SEQUENCES, values, strict=True):
                kernel = KERNEL_ATTR.get(implementation)
                op = attention_op(seq, head_dim, causal=causal, backward=backward, kernel=kernel)
                if fp8:
                    op = fp8_op(op)
                flops = factor * 4 * TOKENS * seq * WIDTH * (0.5 if causal else 1.0)
                latency = model.predict(op, spec).latency_s
                predicted = flops / latency / 1e12
                points.append(
                    Point(implementation, causal, head_dim, seq, value, predicted, backward, fp8)
                )
    return points


def summary(points: list[Point]) -> tuple[int, float, float]:
    """(count, MAPE, geometric-mean ratio) of ``points``."""
    return ratio_summary([r.ratio for r in points])


def _series(p: Point) -> tuple[str, bool, int, bool, bool]:
    return (p.implementation, p.causal, p.head_dim, p.backward, p.fp8)


def _direction(backward: bool, fp8: bool) -> str:
    """The printed pass: ``fwd``, ``bwd`` or ``fp8`` (the FP8 forward)."""
    return "bwd" if backward else "fp8" if fp8 else "fwd"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="effective_roofline")
    parser.add_argument("--hardware", default="h100_sxm")
    args = parser.parse_args(argv)
    points = compare(args.model, args.hardware)
    print(f"{args.model} on {args.hardware} / published TFLOP/s (Shah et al. 2024, Figs. 5-7)")
    print(f"{'series':26s}" + "".join(f"{s:>7d}" for s in SEQUENCES))
    for published, backward, fp8 in SETS:
        for implementation, causal, head_dim in published:
            key = (implementation, causal, head_dim, backward, fp8)
            row = [p for p in points if _series(p) == key]
            mask = "causal" if causal else "full"
            label = f"{_direction(backward, fp8)} {implementation} {mask} d{head_dim}"
            print(f"{label:26s}" + "".join(f"{p.ratio:7.2f}" for p in row))
    for _, backward, fp8 in SETS:
        for implementation in ("fa3", "cudnn", "fa2"):
            mine = [
                p
                for p in points
                if (p.implementation, p.backward, p.fp8) == (implementation, backward, fp8)
            ]
            if not mine:
                continue
            for scope, chosen in (("all", mine), (">= 4k", [p for p in mine if p.seq >= 4096])):
                n, mape, geomean = summary(chosen)
                figures = f"MAPE {100 * mape:5.1f} %  geomean {geomean:.3f}"
                direction = _direction(backward, fp8)
                print(f"{direction} {implementation:6s} {scope:6s} n={n:3d}  {figures}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_attention", main)
