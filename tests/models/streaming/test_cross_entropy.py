"""The cross-entropy op: its view's checks, its kernels' structures (hand-derived), the ATen
nll_loss chain's time by hand, and the traffic each implementation reports."""

from __future__ import annotations

import math

import pytest

from opmodel import DType, LocalOp, OpKind, OpValidationError, Phase, TensorRole, TensorSpec, ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.streaming.cross_entropy import liger_cross_entropy_kernel, nll_loss_kernel

A100 = load_hardware("a100_80gb_sxm")


def _ce(*tensors: TensorSpec, **attrs: object) -> LocalOp:
    return LocalOp(
        name="ce",
        kind=OpKind.CROSS_ENTROPY,
        phase=Phase.TRAIN_FWD,
        tensors=tensors,
        attrs=attrs,  # type: ignore[arg-type]
    )


def test_nll_loss_kernels() -> None:
    """ATen's reducing kernel: one block of 32 threads, a target and its log-probability per
    row visited, 16,384 rows -> 512 visits -> 1,024 dependent loads; the per-row kernel: one
    row per thread of 128-thread CTAs."""
    reduced = nll_loss_kernel(16384, reduced=True)
    assert (reduced.ctas, reduced.threads_per_cta, reduced.serial_loads) == (1, 32, 1024)
    assert reduced.reductions == 1
    per_row = nll_loss_kernel(16384, reduced=False)
    assert (per_row.ctas, per_row.threads_per_cta, per_row.serial_loads) == (128, 128, 2)
    with pytest.raises(ValueError, match="rows must be >= 1"):
        nll_loss_kernel(0, reduced=True)


def test_liger_kernel_blocks() -> None:
    """Blocks of min(32768, next power of two of vocab): 4,096 logits in one block (4 per
    thread of 1,024: 36 registers), 131,072 in four of 32,768 (32 per thread: 64 registers),
    two reductions per block, two passes, the target from L2."""
    small = liger_cross_entropy_kernel(16384, 4096)
    assert (small.serial_loads, small.reductions, small.registers_per_thread) == (1, 2, 36)
    large = liger_cross_entropy_kernel(16384, 131072)
    assert (large.serial_loads, large.reductions, large.registers_per_thread) == (4, 8, 64)
    assert large.global_passes == 2 and large.l2_serial_loads == 1
    assert large.threads_per_cta == 1024 and large.ctas == 16384
    assert liger_cross_entropy_kernel(3, 100_000).serial_loads == math.ceil(100_000 / 32768)


def test_the_nll_chain_by_hand() -> None:
    """On the A100 the reducing nll_loss over 16,384 rows waits out 1,024 DRAM round trips of
    the config's 400 ns: about 410 µs, within 2 % once the block reduction, the CTA's
    turnaround and the fixed overhead are added (its DRAM traffic is too small to load the
    round trips)."""
    op = ops.cross_entropy(16384, 4096)
    profile = get_model("effective_roofline").predict(op, A100)
    nll = profile.diagnostics.nll_loss  # type: ignore[attr-defined]
    assert nll.kernel.name == "nll_loss_forward_reduce_cuda_kernel_2d"
    assert nll.latency_s == pytest.approx(1024 * 4.0e-7, rel=0.02)
    assert profile.latency_s == pytest.approx(
        profile.diagnostics.softmax.latency_s + nll.latency_s  # type: ignore[attr-defined]
    )


def test_traffic_by_implementation() -> None:
    """PyTorch writes the log-probabilities (rows x vocab x 4 B) and the loss; Liger's kernel
    writes the gradient over the logits; both read the logits at least once; FLOPs are the
    roofline's (5 per logit + 1 per row)."""
    rows, vocab = 8192, 32768
    logits = rows * vocab * 4
    for implementation in ("pytorch", "fused"):
        op = ops.cross_entropy(rows, vocab, implementation=implementation)
        profile = get_model("effective_roofline").predict(op, A100)
        hbm = profile.traffic["hbm"]
        assert hbm.write_bytes >= logits + 4
        assert hbm.read_bytes >= logits + rows * 8
        assert profile.flops == (5 * vocab + 1) * rows
        assert profile.implementation == f"effective_roofline/streaming/{implementation}"


def test_tpus_take_the_roofline_estimate() -> None:
    op = ops.cross_entropy(1024, 32000)
    tpu = load_hardware("tpu_v5e")
    effective = get_model("effective_roofline").predict(op, tpu)
    assert effective.implementation.startswith("effective_roofline/roofline")
    assert effective.latency_s == pytest.approx(get_model("roofline").predict(op, tpu).latency_s)


@pytest.mark.parametrize(
    ("tensors", "attrs", "message"),
    [
        (
            (("input", (8, 100), "fp32"), ("input", (7,), "int64"), ("output", (1,), "fp32")),
            {},
            "targets [7] must hold one index per row of the logits [8, 100] (8 rows)",
        ),
        (
            (("input", (8, 100), "fp32"), ("input", (8,), "fp32"), ("output", (1,), "fp32")),
            {},
            "needs one floating-point input (the logits) and one integer input (targets)",
        ),
        (
            (("input", (8, 100), "fp32"), ("input", (8,), "int64"), ("output", (1,), "fp32")),
            {"reduction": "none"},
            "loss [1] does not match the reduction (none: one per row, 8)",
        ),
        (
            (("input", (8, 100), "fp32"), ("input", (8,), "int64"), ("output", (8,), "fp32")),
            {"reduction": "sum"},
            "loss [8] does not match the reduction (mean or sum: 1 element)",
        ),
        (
            (
                ("input", (8, 100), "fp32"),
                ("input", (8,), "int64"),
                ("grad", (1,), "fp32"),
                ("output", (1,), "fp32"),
            ),
            {},
            "a backward pass (grad tensor) is not modelled",
        ),
    ],
)
def test_bad_ops_are_one_line_errors(
    tensors: tuple[tuple[str, tuple[int, ...], str], ...], attrs: dict[str, object], message: str
) -> None:
    specs = tuple(TensorSpec(TensorRole(r), s, DType(d)) for r, s, d in tensors)
    with pytest.raises(OpValidationError) as info:
        _ce(*specs, **attrs)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith("op 'ce' (cross_entropy): ")


def test_an_unknown_implementation_names_the_accepted_ones() -> None:
    with pytest.raises(OpValidationError, match=r"implementation.*pytorch, fused"):
        ops.cross_entropy(8, 100, implementation="vllm")
    with pytest.raises(OpValidationError, match="reduction must be one of mean, sum, none"):
        ops.cross_entropy(8, 100, reduction="avg")
