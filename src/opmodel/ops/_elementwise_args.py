"""The arguments of ``ops.elementwise`` checked: the function, the shapes of its inputs and
the inputs that are strided views (one-line OpValidationErrors naming the argument)."""

from __future__ import annotations

from collections.abc import Sequence

from opmodel.core.attrs import ELEMENTWISE_FLOPS_PER_ELEMENT
from opmodel.core.errors import OpValidationError, did_you_mean
from opmodel.core.op import integer_of
from opmodel.core.views import broadcasts
from opmodel.ops._common import positive

__all__ = ["check_function", "input_shapes_of", "shape_of", "strided_indices"]

# functions of two inputs (x and y, or the forward's x or output and dy), and of three
_TWO_INPUTS = frozenset(
    {"add", "sub", "mul", "div", "maximum", "minimum", "silu_and_mul", "gelu_and_mul"}
    | {"gelu_tanh_and_mul"}
    | {f for f in ELEMENTWISE_FLOPS_PER_ELEMENT if f.endswith("_backward")}
)
_THREE_INPUTS = frozenset({"fma", "where"})


def shape_of(where: str, shape: int | Sequence[int], field: str = "shape") -> tuple[int, ...]:
    """``shape`` (an element count, or a list, tuple or numpy array of dimensions) as a tuple
    of positive ints; errors name it ``field``."""
    listed = getattr(shape, "tolist", None)
    if callable(listed) and not isinstance(shape, int):  # a numpy array (or scalar)
        shape = listed()
    if isinstance(shape, Sequence) and not isinstance(shape, str | bytes):
        if not shape:
            raise OpValidationError(f"{where}: {field} must have at least one dimension (got [])")
        return tuple(positive(where, f"{field}[{i}]", dim) for i, dim in enumerate(shape))
    return (positive(where, field, shape),)


def check_function(where: str, function: object) -> None:
    """``function`` is one of the elementwise functions (with a did-you-mean)."""
    if not isinstance(function, str) or function not in ELEMENTWISE_FLOPS_PER_ELEMENT:
        known = sorted(ELEMENTWISE_FLOPS_PER_ELEMENT)
        hint = did_you_mean(function, known) if isinstance(function, str) else ""
        msg = f"{where}: function must be one of {', '.join(known)} (got {function!r}){hint}"
        raise OpValidationError(msg)


def input_shapes_of(
    where: str,
    function: str,
    dims: tuple[int, ...],
    inputs: int | None,
    input_shapes: Sequence[int | Sequence[int]] | None,
) -> list[tuple[int, ...]]:
    """Each input's shape: ``input_shapes`` checked against ``dims``, else ``dims`` for the
    function's default count or ``inputs``."""
    count = None if inputs is None else positive(where, "inputs", inputs)
    if input_shapes is None:
        default = 3 if function in _THREE_INPUTS else 2 if function in _TWO_INPUTS else 1
        shapes = [dims] * (default if count is None else count)
    else:
        if isinstance(input_shapes, str | bytes | int) or not isinstance(input_shapes, Sequence):
            msg = f"{where}: input_shapes must be a list of shapes (got {input_shapes!r})"
            raise OpValidationError(msg)
        shapes = [shape_of(where, s, f"input_shapes[{i}]") for i, s in enumerate(input_shapes)]
        if not shapes or (count is not None and count != len(shapes)):
            msg = f"{where}: input_shapes must list {count or 'one or more'} shapes (got "
            raise OpValidationError(f"{msg}{len(shapes)})")
        for i, s in enumerate(shapes):
            if not broadcasts(s, dims):
                msg = f"{where}: input_shapes[{i}] {list(s)} does not broadcast to {list(dims)}"
                raise OpValidationError(msg)
    if function == "where" and len(shapes) != 3:
        raise OpValidationError(f"{where}: inputs must be 3 for where (got {len(shapes)})")
    return shapes


def strided_indices(where: str, indices: object, inputs: int) -> frozenset[int]:
    """The inputs ``strided_inputs`` names: indices from 0 to ``inputs`` - 1, each once (a
    list, tuple or numpy array)."""
    listed = getattr(indices, "tolist", None)
    if callable(listed):
        indices = listed()
    if isinstance(indices, str | bytes) or not isinstance(indices, Sequence):
        msg = f"{where}: strided_inputs must be a list of input indices (got {indices!r})"
        raise OpValidationError(msg)
    picked = [integer_of(i) for i in indices]  # None for a bool or a non-integer
    if any(i is None or not 0 <= i < inputs for i in picked) or len(set(picked)) != len(picked):
        msg = f"{where}: strided_inputs must name distinct inputs 0 to {inputs - 1}"
        raise OpValidationError(f"{msg} (got {list(indices)!r})")
    return frozenset(i for i in picked if i is not None)
