"""The tensors of an optimizer step (``OpKind.OPTIMIZER``): :class:`OptimizerView`.

Tensors (docs/op_files.md): one ``weight``, the parameters the step updates in place; one
``grad``, their gradients; and one ``workspace`` tensor per state the algorithm keeps (attr
``algorithm``: ``sgd`` none, ``sgd_momentum`` its momentum buffer, ``adam`` and ``adamw`` the
first and second moments, in that order), updated in place. Every tensor holds the same
number of elements, each in its own floating dtype (bf16 parameters with fp32 states, as a
mixed-precision optimizer keeps them, or all alike). The op is the step over one group of
``attrs.tensors`` parameter tensors of equal size, flattened here into one count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.attrs_optimizer import OPTIMIZER_STATES
from opmodel.core.dtypes import DType
from opmodel.core.enums import TensorRole
from opmodel.core.viewcheck import compute_dtype, fail, one, only_roles

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["OptimizerView", "optimizer_view"]

_STATE_NAMES = {"sgd_momentum": ("momentum buffer",), "adam": ("exp_avg", "exp_avg_sq")}


@dataclass(frozen=True, slots=True, kw_only=True)
class OptimizerView:
    """One ``algorithm`` step over ``elements`` parameters split into ``tensors`` tensors."""

    algorithm: str
    implementation: str  # fused or foreach
    elements: int
    tensors: int
    max_blocks_per_launch: int
    params: TensorSpec
    grads: TensorSpec
    states: tuple[TensorSpec, ...]
    compute_dtype: DType


def _states(op: LocalOp, algorithm: str, elements: int) -> tuple[TensorSpec, ...]:
    states = op.tensors_with(TensorRole.WORKSPACE)
    wanted = OPTIMIZER_STATES[algorithm]
    if len(states) != wanted:
        names = ", ".join(_STATE_NAMES.get(algorithm.removesuffix("w"), ())) or "none"
        raise fail(
            op,
            f"{algorithm} keeps {wanted} state tensor{'s' if wanted != 1 else ''} per parameter "
            f"({names}) as workspace tensors, got {len(states)}",
        )
    for index, state in enumerate(states):
        if state.num_elements != elements or not state.dtype.is_float:
            raise fail(
                op,
                f"state {index} {list(state.shape)} {state.dtype.value} must be a "
                f"floating-point tensor of the parameters' {elements} elements",
            )
    return states


def optimizer_view(op: LocalOp) -> OptimizerView:
    """Check ``op``'s tensors and attrs against the convention (module docstring)."""
    only_roles(op, (TensorRole.WEIGHT, TensorRole.GRAD, TensorRole.WORKSPACE))
    algorithm = op.attrs.get("algorithm")
    if algorithm is None:
        raise fail(op, "attrs.algorithm is required (sgd, sgd_momentum, adam, adamw)")
    assert isinstance(algorithm, str)
    params = one(op, TensorRole.WEIGHT, "the parameters")
    grads = one(op, TensorRole.GRAD, "the gradients")
    for what, tensor in (("parameters", params), ("gradients", grads)):
        if not tensor.dtype.is_float:
            raise fail(op, f"the {what} must be floating-point (got {tensor.dtype.value})")
    elements = params.num_elements
    if grads.num_elements != elements:
        raise fail(
            op,
            f"gradients {list(grads.shape)} must hold the parameters' {elements} elements",
        )
    tensors = op.attrs.get("tensors", 1)
    assert isinstance(tensors, int)
    if tensors > elements:
        raise fail(op, f"attrs.tensors {tensors} exceeds the {elements} parameters")
    blocks = op.attrs.get("max_blocks_per_launch", 320)
    implementation = op.attrs.get("implementation", "fused")
    assert isinstance(blocks, int) and isinstance(implementation, str)
    return OptimizerView(
        algorithm=algorithm,
        implementation=implementation,
        elements=elements,
        tensors=tensors,
        max_blocks_per_launch=blocks,
        params=params,
        grads=grads,
        states=_states(op, algorithm, elements),
        compute_dtype=compute_dtype(op, DType.FP64 if params.dtype is DType.FP64 else DType.FP32),
    )
