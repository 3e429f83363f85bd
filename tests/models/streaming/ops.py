"""Shared builders of the streaming-kernel tests: row and elementwise ops on shipped GPUs and
their effective_roofline evaluation."""

from __future__ import annotations

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.models.streaming import (
    StreamingEvaluation,
    StreamWork,
)

A100 = load_hardware("a100_80gb_sxm")


H100 = load_hardware("h100_sxm")


MODEL = get_model("effective_roofline")


def row_op(kind: OpKind, rows: int, length: int, implementation: str | None = None) -> LocalOp:
    weights = {OpKind.SOFTMAX: 0, OpKind.RMSNORM: 1, OpKind.LAYERNORM: 2}[kind]
    tensors = (
        TensorSpec(TensorRole.INPUT, (rows, length), DType.FP16),
        *(TensorSpec(TensorRole.WEIGHT, (length,), DType.FP16) for _ in range(weights)),
        TensorSpec(TensorRole.OUTPUT, (rows, length), DType.FP16),
    )
    attrs = {"implementation": implementation} if implementation else {}
    return LocalOp(name="row", kind=kind, phase=Phase.PREFILL, tensors=tensors, attrs=attrs)


def add_op(rows: int, length: int) -> LocalOp:
    return elementwise_op(rows, length, "add", inputs=2)


def elementwise_op(
    rows: int, length: int, function: str, *, inputs: int = 1, **attrs: str
) -> LocalOp:
    shape = (rows, length)
    return LocalOp(
        name=function,
        kind=OpKind.ELEMENTWISE,
        phase=Phase.PREFILL,
        tensors=(
            *(TensorSpec(TensorRole.INPUT, shape, DType.FP16) for _ in range(inputs)),
            TensorSpec(TensorRole.OUTPUT, shape, DType.FP16),
        ),
        attrs={"function": function, **attrs},
    )


def no_bytes(**counts: float) -> StreamWork:
    """Work that moves nothing: only the compute bounds (``sfu_ops``,
    ``instructions_per_element``) can limit it."""
    return StreamWork(
        read_bytes=0,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=0,
        flops=0,
        vector_flops_per_s=0.0,
        **counts,  # type: ignore[arg-type]
    )


def evaluation(op: LocalOp, hardware: HardwareSpec) -> StreamingEvaluation:
    diagnostics = MODEL.predict(op, hardware).diagnostics
    assert isinstance(diagnostics, StreamingEvaluation)
    return diagnostics


def op_of(
    kind: OpKind,
    phase: Phase,
    tensors: tuple[tuple[TensorRole, tuple[int, ...]], ...],
    dtype: DType,
    attrs: dict[str, object],
) -> LocalOp:
    """An op of ``kind`` whose tensors are ``(role, shape)`` pairs, all of ``dtype``."""
    specs = tuple(TensorSpec(role, shape, dtype) for role, shape in tensors)
    return LocalOp(name=kind.value, kind=kind, phase=phase, tensors=specs, attrs=attrs)  # type: ignore[arg-type]
