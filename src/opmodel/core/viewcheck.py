"""Small checks shared by the shape views; every failure names the op and its kind."""

from __future__ import annotations

from typing import TYPE_CHECKING

from opmodel.core.dtypes import DType
from opmodel.core.enums import TensorRole
from opmodel.core.errors import OpValidationError

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["compute_dtype", "fail", "one", "only_roles"]


def fail(op: LocalOp, problem: str) -> OpValidationError:
    """Build the error ``op 'NAME' (KIND): problem``."""
    return OpValidationError(f"op '{op.name}' ({op.kind.value}): {problem}")


def one(op: LocalOp, role: TensorRole, what: str, *, besides: str | None = None) -> TensorSpec:
    """The single tensor of ``role`` (besides those tagged with layout ``besides``); an error
    when there are none or several."""
    found = op.tensors_with(role)
    if besides is not None:
        found = tuple(t for t in found if t.layout != besides)
    if len(found) != 1:
        raise fail(op, f"needs exactly one {role.value} tensor ({what}), got {len(found)}")
    return found[0]


def compute_dtype(op: LocalOp, default: DType) -> DType:
    """The ``compute_dtype`` attr when given (already validated), else ``default``."""
    value = op.attrs.get("compute_dtype")
    return DType(value) if isinstance(value, str) else default


def vector_dtype(op: LocalOp, source: TensorSpec) -> DType:
    """The vector engine's dtype for arithmetic on ``source``: the ``compute_dtype`` attr when
    given, else fp64 for an fp64 tensor and fp32 otherwise (kernels accumulate in fp32)."""
    return compute_dtype(op, DType.FP64 if source.dtype is DType.FP64 else DType.FP32)


def only_roles(op: LocalOp, allowed: tuple[TensorRole, ...]) -> None:
    """Reject tensors whose role the kind does not use."""
    for index, tensor in enumerate(op.tensors):
        if tensor.role not in allowed:
            roles = ", ".join(r.value for r in allowed)
            raise fail(op, f"tensors[{index}]: role {tensor.role.value} not accepted ({roles})")
