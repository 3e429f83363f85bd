"""Liger-Kernel's published LLaMA MLP blocks (data/blocks/liger_mlp.csv) as the kernels that
run them, for scripts/compare_published_mlp.py.

A block is ``down_proj(act(gate_proj(x)) * up_proj(x))`` over ``tokens`` rows of ``hidden``
(transformers' LlamaMLP). ``F.linear`` computes ``x @ W^T`` with ``W`` stored ``[out, in]``, so
each projection is a GEMM with ``transpose_b``. transformers' ``LlamaMLP`` (provider
``huggingface``) runs the activation and the product as two ATen kernels in that order
(gate GEMM, activation, up GEMM, product, down GEMM); Liger's ``LigerSwiGLUMLP`` and
``LigerGEGLUMLP`` (provider ``liger``) run both in one row-per-program Triton kernel after the
two GEMMs. The GELU is the tanh form (``gelu_pytorch_tanh``).

A ``backward`` row times ``y.backward(dy)`` of ``LlamaMLP`` (ATen's autograd kernels; every
weight requires its gradient): per projection ``y = x W^T`` a data-gradient GEMM ``dy W`` and a
weight-gradient GEMM ``dy^T x`` (``transpose_a``), from the last projection to the first; the
product's two gradients (two multiplies), the activation's backward (``silu_backward`` or the
tanh ``gelu_backward``); the sum of the two data gradients that reach ``x`` (an add); and, since
``do_bench`` resets only ``x``'s gradient between calls, each weight's new gradient added in
place to the one it holds (three adds of ``[intermediate, hidden]``). A block's time is the sum
of its kernels: ``do_bench`` times the GPU from the first launch to the last kernel's end, and the
host enqueues these kernels faster than they run (each GEMM takes 20 us or more), so no
launch gap enters; its L2 flush before each call, about 256 MB of dirty lines, is left out
(under 2 % of the shortest block's time at the B200's DRAM rate).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opmodel import ops
from opmodel.core.errors import OpModelError
from opmodel.core.model import OpModel
from opmodel.core.op import LocalOp
from opmodel.hardware.spec import HardwareSpec

DATA = Path(__file__).resolve().parent.parent / "data" / "blocks" / "liger_mlp.csv"
PROVIDERS = ("huggingface", "liger")
ACTIVATIONS = ("silu", "gelu_tanh")
MODES = ("forward", "backward")
_BACKWARD = {"silu": "silu_backward", "gelu_tanh": "gelu_backward"}  # gelu_backward: tanh form


@dataclass(frozen=True, slots=True)
class Block:
    """One published MLP-block time (a row of ``liger_mlp.csv``)."""

    label: str
    hardware: str
    benchmark: str
    mode: str
    provider: str
    activation: str
    tokens: int
    hidden: int
    intermediate: int
    dtype: str
    time_s: float

    @property
    def gemm_tflop(self) -> float:
        """The three forward GEMMs' work in TFLOP: ``3 x 2 x tokens x hidden x intermediate``
        (a backward pass runs twice as much)."""
        return 6 * self.tokens * self.hidden * self.intermediate / 1e12


def load_blocks(path: Path = DATA) -> list[Block]:
    """Every row of ``path``; a bad value is a one-line error naming the file, row and field."""
    with path.open(newline="") as handle:
        return [_block(path, i, r) for i, r in enumerate(csv.DictReader(handle), start=2)]


def _block(path: Path, line: int, row: dict[str, str]) -> Block:
    where = f"{path}: line {line}"
    checks = (("mode", MODES), ("provider", PROVIDERS), ("activation", ACTIVATIONS))
    for field, allowed in checks:
        if row.get(field) not in allowed:
            msg = f"{where}: {field} must be one of {', '.join(allowed)} (got {row.get(field)!r})"
            raise OpModelError(msg)
    try:
        sizes = [int(row[f]) for f in ("tokens", "hidden", "intermediate")]
        time_s = float(row["time_ms"]) * 1e-3
    except (KeyError, TypeError, ValueError) as exc:
        raise OpModelError(f"{where}: tokens, hidden, intermediate and time_ms: {exc}") from None
    if row["mode"] == "backward" and row["provider"] != "huggingface":
        raise OpModelError(f"{where}: a backward row must be provider huggingface (ATen's kernels)")
    if min(sizes) < 1 or not time_s > 0:
        raise OpModelError(f"{where}: sizes and time_ms must be positive (got {sizes}, {time_s})")
    tokens, hidden, intermediate = sizes
    return Block(
        row["label"], row["hardware"], row["benchmark"], row["mode"], row["provider"],
        row["activation"],
        tokens, hidden, intermediate, row["dtype"], time_s,
    )  # fmt: skip


def block_ops(block: Block) -> tuple[LocalOp, ...]:
    """The kernels of ``block`` in launch order."""
    if block.mode == "backward":
        return backward_ops(block)
    t, h, i, d = block.tokens, block.hidden, block.intermediate, block.dtype
    gate = ops.gemm(t, i, h, d, transpose_b=True, name="gate_proj", phase="train_fwd")
    up = ops.gemm(t, i, h, d, transpose_b=True, name="up_proj", phase="train_fwd")
    down = ops.gemm(t, h, i, d, transpose_b=True, name="down_proj", phase="train_fwd")
    if block.provider == "huggingface":
        act = ops.elementwise(block.activation, (t, i), d, name="act_fn", phase="train_fwd")
        product = ops.elementwise("mul", (t, i), d, name="act_mul", phase="train_fwd")
        return (gate, act, up, product, down)
    fused = ops.elementwise(
        f"{block.activation}_and_mul", (t, i), d, name="liger_act_mul", phase="train_fwd",
        implementation="fused",
    )  # fmt: skip
    return (gate, up, fused, down)


def backward_ops(block: Block) -> tuple[LocalOp, ...]:
    """ATen's kernels of ``LlamaMLP``'s backward pass, in autograd's order."""
    t, h, i, d = block.tokens, block.hidden, block.intermediate, block.dtype

    def gradients(name: str, n_out: int, n_in: int) -> tuple[LocalOp, LocalOp]:
        data = ops.gemm(t, n_in, n_out, d, name=f"{name}_dgrad", phase="train_bwd")
        weight = ops.gemm(
            n_out, n_in, t, d, transpose_a=True, name=f"{name}_wgrad", phase="train_bwd"
        )
        return data, weight

    def vector(function: str, shape: tuple[int, int], name: str) -> LocalOp:
        return ops.elementwise(function, shape, d, name=name, phase="train_bwd")

    return (
        *gradients("down_proj", h, i),
        vector("mul", (t, i), "act_grad"),
        vector("mul", (t, i), "up_grad"),
        vector(_BACKWARD[block.activation], (t, i), "gate_grad"),
        *gradients("up_proj", i, h),
        *gradients("gate_proj", i, h),
        vector("add", (t, h), "x_grad_sum"),
        vector("add", (h, i), "down_grad_accumulate"),
        *(vector("add", (i, h), f"{w}_grad_accumulate") for w in ("up", "gate")),
    )


def block_latency_s(model: OpModel, block: Block, hardware: HardwareSpec) -> float:
    """The sum of ``block``'s kernel latencies under ``model`` on ``hardware``."""
    return sum(model.predict(op, hardware).latency_s for op in block_ops(block))


def gemm_share(model: OpModel, block: Block, hardware: HardwareSpec) -> float:
    """The GEMMs' part of ``block``'s predicted time."""
    times = [(op, model.predict(op, hardware).latency_s) for op in block_ops(block)]
    return sum(t for op, t in times if op.kind.value == "gemm") / sum(t for _, t in times)


def blocks_of(blocks: Sequence[Block], hardware: str) -> list[Block]:
    """The blocks measured on ``hardware``."""
    return [b for b in blocks if b.hardware == hardware]
