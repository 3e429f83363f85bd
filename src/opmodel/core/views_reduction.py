"""The shape view of a reduction (``OpKind.REDUCTION``): :class:`ReductionView`.

Tensors (docs/op_files.md): one ``input`` x, one ``output`` y, an optional ``workspace``.
Without attr ``dim`` the op reduces x's trailing axes: each output reduces ``x elements / y
elements`` values that lie next to each other in x (``torch.sum(x)``, ``x.amax(-1)``), any y
shape with that element count. With ``dim`` (a list of axes of x, negative counting from the
end, as ``torch.sum(x, dim=...)`` takes them) y must be x's shape without those axes, or with
each of them 1 (``keepdim``), and the reduced axes may lie anywhere: ``dy.sum(0)`` over
``[tokens, hidden]`` is ``dim: [0]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.attrs_reduction import INDEX_FUNCTIONS
from opmodel.core.dtypes import DType
from opmodel.core.enums import TensorRole
from opmodel.core.viewcheck import fail, one, only_roles, vector_dtype

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["ReductionView", "reduction_view"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReductionView:
    """``y = reduce(x)`` over ``reduce_length`` values per output element.

    ``inner_outputs``: the output elements that lie next to each other in x after its last
    reduced axis (the product of x's axes after it), 1 when x's last axis is reduced; a
    reduction over leading axes (``inner_outputs > 1``) reads, for each reduced index, a
    contiguous run of outputs. ``reduced_block``: the reduced axes are one contiguous block
    of x's axes (so a contiguous x coalesces them into a single reduced dimension)."""

    reduce_length: int
    x: TensorSpec
    y: TensorSpec
    function: str
    compute_dtype: DType
    inner_outputs: int = 1
    reduced_block: bool = True


def _axes(op: LocalOp, dims: object, rank: int) -> tuple[int, ...]:
    """The attr's axes, each in ``[-rank, rank)``, as sorted non-negative indices."""
    assert isinstance(dims, list | tuple)  # LocalOp checks the attr: a list of integers
    axes = []
    for d in dims:
        if not -rank <= int(d) < rank:
            raise fail(op, f"attrs.dim: axis {d} is out of range for an input of {rank} dims")
        axes.append(int(d) % rank)
    if len(set(axes)) != len(axes):
        raise fail(op, f"attrs.dim: each axis at most once (got {list(dims)})")
    return tuple(sorted(axes))


def _by_axes(op: LocalOp, x: TensorSpec, y: TensorSpec, dims: object) -> tuple[int, int, bool]:
    """(values reduced per output, ``inner_outputs``, ``reduced_block``) for attr ``dim``,
    after checking ``y`` against x's shape without the axes or with them 1."""
    axes = _axes(op, dims, len(x.shape))
    kept = [n for i, n in enumerate(x.shape) if i not in axes]
    keepdim = [1 if i in axes else n for i, n in enumerate(x.shape)]
    if list(y.shape) not in (kept, keepdim, kept or [1]):
        raise fail(
            op,
            f"output shape {list(y.shape)} must be the input's {list(x.shape)} without axes "
            f"{list(axes)} ({kept or [1]}) or with them 1 ({keepdim})",
        )
    inner = math.prod(x.shape[axes[-1] + 1 :])
    return math.prod(x.shape[i] for i in axes), inner, axes == tuple(range(axes[0], axes[-1] + 1))


def _check_dtypes(op: LocalOp, x: TensorSpec, y: TensorSpec, function: str) -> None:
    """An index reduction writes int64 and reads numbers; a value reduction reads floats and
    writes a float (``torch.sum`` of an integer tensor is not modelled)."""
    if function in INDEX_FUNCTIONS:
        if y.dtype is not DType.INT64:
            raise fail(
                op,
                f"{function} writes int64 indices: output dtype must be int64 "
                f"(got {y.dtype.value})",
            )
        if not x.dtype.is_float:
            raise fail(op, f"{function}: input dtype must be a float type (got {x.dtype.value})")
        return
    if not (x.dtype.is_float and y.dtype.is_float):
        raise fail(
            op,
            f"function {function}: input and output dtypes must be float types (got "
            f"{x.dtype.value} and {y.dtype.value}; argmax and argmin write int64)",
        )


def reduction_view(op: LocalOp) -> ReductionView:
    """The view of a reduction op (module docstring)."""
    only_roles(op, (TensorRole.INPUT, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    x = one(op, TensorRole.INPUT, "x")
    y = one(op, TensorRole.OUTPUT, "y")
    dims = op.attrs.get("dim")
    if dims is not None:
        length, inner, block = _by_axes(op, x, y, dims)
    elif x.num_elements % y.num_elements:
        raise fail(
            op, f"output {list(y.shape)} elements must divide input {list(x.shape)} elements"
        )
    else:  # the trailing axes
        length, inner, block = x.num_elements // y.num_elements, 1, True
    function = str(op.attrs.get("function", "sum"))
    _check_dtypes(op, x, y, function)
    return ReductionView(
        reduce_length=length,
        x=x,
        y=y,
        function=function,
        compute_dtype=vector_dtype(op, x),
        inner_outputs=inner,
        reduced_block=block,
    )
