"""Constructors of the row and elementwise ops: softmax, layernorm, rmsnorm, elementwise,
RoPE, reduction, embedding and copy (README, "Conventions of the op kinds").

Extra keyword arguments are op attrs (``implementation``, ``warm_l2``, ``producer_bytes``,
...), checked against the kind's schema. The backward pass of a row op is
``opmodel.backward_of(op)``, and so is an embedding's (the table's gradient).
"""

from __future__ import annotations

from collections.abc import Sequence

from opmodel.core.attrs import AttrValue
from opmodel.core.attrs_reduction import INDEX_FUNCTIONS
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.core.views import RESIDUAL, STRIDED
from opmodel.ops._common import assemble, dtype_of, flag, positive, tensor
from opmodel.ops._elementwise_args import (
    check_function,
    input_shapes_of,
    shape_of,
    strided_indices,
)

__all__ = [
    "copy",
    "elementwise",
    "embedding",
    "layernorm",
    "reduction",
    "rmsnorm",
    "rope",
    "softmax",
]

_IN, _W, _OUT = TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.OUTPUT


def _row_op(
    kind: OpKind,
    rows: int,
    length: int,
    dtype: DType | str,
    weights: int,
    *,
    residual: object = False,
) -> tuple[TensorSpec, ...]:
    """x ``[rows, length]``, ``weights`` vectors of ``length`` and y ``[rows, length]``; with
    ``residual``, the residual read after x and the sum ``x + residual`` written after y, both
    tagged ``residual`` (a fused residual add, docs/op_files.md)."""
    where = f"ops.{kind.value}"
    r, n = positive(where, "rows", rows), positive(where, "length", length)
    d = dtype_of(where, "dtype", dtype)
    gammas = tuple(tensor(_W, (n,), d) for _ in range(weights))
    x, y = tensor(_IN, (r, n), d), tensor(_OUT, (r, n), d)
    if not flag(where, "residual", residual):
        return (x, *gammas, y)
    read, written = tensor(_IN, (r, n), d, RESIDUAL), tensor(_OUT, (r, n), d, RESIDUAL)
    return (x, read, *gammas, y, written)


def softmax(
    rows: int,
    length: int,
    dtype: DType | str = DType.BF16,
    *,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """Softmax over each of ``rows`` rows of ``length`` elements."""
    tensors = _row_op(OpKind.SOFTMAX, rows, length, dtype, 0)
    return assemble(OpKind.SOFTMAX, (name, phase), tensors, {}, attrs)


def layernorm(
    rows: int,
    length: int,
    dtype: DType | str = DType.BF16,
    *,
    affine: bool = True,
    residual: bool = False,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """LayerNorm of ``rows`` rows of ``length``, with gamma and beta unless ``affine=False``;
    ``residual=True`` fuses the residual add before it (the residual read, the sum written)."""
    weights = 2 if flag("ops.layernorm", "affine", affine) else 0
    tensors = _row_op(OpKind.LAYERNORM, rows, length, dtype, weights, residual=residual)
    return assemble(OpKind.LAYERNORM, (name, phase), tensors, {}, attrs)


def rmsnorm(
    rows: int,
    length: int,
    dtype: DType | str = DType.BF16,
    *,
    residual: bool = False,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """RMSNorm of ``rows`` rows of ``length``, with its weight vector; ``residual=True`` fuses
    the residual add before it (vLLM's ``fused_add_rms_norm``: the residual read, the sum
    written as the next layer's residual)."""
    tensors = _row_op(OpKind.RMSNORM, rows, length, dtype, 1, residual=residual)
    return assemble(OpKind.RMSNORM, (name, phase), tensors, {}, attrs)


def elementwise(
    function: str,
    shape: int | Sequence[int],
    dtype: DType | str = DType.BF16,
    *,
    inputs: int | None = None,
    input_shapes: Sequence[int | Sequence[int]] | None = None,
    strided_inputs: Sequence[int] = (),
    out_dtype: DType | str | None = None,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """``function`` over tensors of ``shape``: ``inputs`` of them (default: 2 for binary
    functions, the ``*_and_mul`` functions' two halves and the ``*_backward`` functions, 3 for
    ``fma`` and ``where``, else 1) into one output in ``out_dtype`` (default ``dtype``; ``cast``
    changes it). ``where`` (``torch.where(cond, a, b)``) takes exactly 3, the condition first,
    stored as ``int8`` (a bool's one byte). ``input_shapes`` gives each input its own shape,
    broadcast to ``shape`` by NumPy's rule (a bias ``[n]`` onto ``[m, n]``, a mask ``[1, s, s]``
    onto ``[b, s, s]``, a 0-dim tensor as ``[1]``): ATen runs such an op as its non-contiguous
    kernel; the inputs are then ``len(input_shapes)``. ``strided_inputs`` lists the inputs
    (by index) that are strided views of the output's shape, rows not adjacent (one half of
    ``torch.chunk(y, 2, -1)``: layout ``strided``), which ATen runs the same way."""
    where = "ops.elementwise"
    check_function(where, function)
    dims = shape_of(where, shape)
    d = dtype_of(where, "dtype", dtype)
    shapes = input_shapes_of(where, function, dims, inputs, input_shapes)
    strided = strided_indices(where, strided_inputs, len(shapes))
    out = d if out_dtype is None else dtype_of(where, "out_dtype", out_dtype)
    kinds = [DType.INT8 if function == "where" and i == 0 else d for i in range(len(shapes))]
    tensors = (
        *(
            tensor(_IN, s, k, STRIDED if i in strided else None)
            for i, (s, k) in enumerate(zip(shapes, kinds, strict=True))
        ),
        tensor(_OUT, dims, out),
    )
    return assemble(
        OpKind.ELEMENTWISE, (name or function, phase), tensors, {"function": function}, attrs
    )


def rope(
    tokens: int,
    heads: int,
    head_dim: int,
    dtype: DType | str = DType.BF16,
    *,
    implementation: str | None = "vllm",
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """Rotary position embedding of ``heads`` heads (the query and key heads together) of
    ``head_dim`` for each of ``tokens`` tokens, by the cos/sin row of each token's position,
    in place (vLLM's kernel by default; ``implementation=None`` for a plain elementwise)."""
    where = "ops.rope"
    t, h = positive(where, "tokens", tokens), positive(where, "heads", heads)
    size = positive(where, "head_dim", head_dim)
    d = dtype_of(where, "dtype", dtype)
    tensors = (
        tensor(_IN, (t, h, size), d),
        tensor(_IN, (t, 1, size), d),
        tensor(_OUT, (t, h, size), d),
    )
    options: dict[str, AttrValue | None] = {"function": "rope", "implementation": implementation}
    return assemble(OpKind.ELEMENTWISE, (name or "rope", phase), tensors, options, attrs)


def reduction(
    rows: int,
    length: int,
    dtype: DType | str = DType.BF16,
    *,
    function: str | None = None,
    dim: int = -1,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """``function`` (sum, mean, max, min, argmax or argmin; default sum) of a ``[rows,
    length]`` tensor over ``dim``: each row into ``[rows]`` (-1 or 1, the default), or over the
    rows into ``[length]`` (0 or -2: attr ``dim: [0]``, a bias gradient's ``dy.sum(0)``).
    argmax and argmin write int64 indices (greedy decoding's ``logits.argmax(-1)``)."""
    where = "ops.reduction"
    r, n = positive(where, "rows", rows), positive(where, "length", length)
    d = dtype_of(where, "dtype", dtype)
    if dim not in (-2, -1, 0, 1) or isinstance(dim, bool):
        raise OpValidationError(f"{where}: dim must be 0 or 1 (or -2, -1) (got {dim!r})")
    leading = dim in (0, -2)
    out = DType.INT64 if function in INDEX_FUNCTIONS else d
    tensors = (tensor(_IN, (r, n), d), tensor(_OUT, (n,) if leading else (r,), out))
    options: dict[str, AttrValue | None] = {"function": function, "dim": (0,) if leading else None}
    return assemble(OpKind.REDUCTION, (name, phase), tensors, options, attrs)


def embedding(
    tokens: int,
    vocab: int,
    hidden: int,
    dtype: DType | str = DType.BF16,
    *,
    index_dtype: DType | str = DType.INT64,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """A gather of ``tokens`` rows of a ``[vocab, hidden]`` table by integer indices."""
    where = "ops.embedding"
    t, v = positive(where, "tokens", tokens), positive(where, "vocab", vocab)
    h = positive(where, "hidden", hidden)
    d = dtype_of(where, "dtype", dtype)
    tensors = (
        tensor(_IN, (t,), dtype_of(where, "index_dtype", index_dtype)),
        tensor(_W, (v, h), d),
        tensor(_OUT, (t, h), d),
    )
    return assemble(OpKind.EMBEDDING, (name, phase), tensors, {}, attrs)


def copy(
    shape: int | Sequence[int],
    dtype: DType | str = DType.BF16,
    *,
    out_dtype: DType | str | None = None,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """A copy of a tensor of ``shape``, cast to ``out_dtype`` when given."""
    where = "ops.copy"
    dims = shape_of(where, shape)
    d = dtype_of(where, "dtype", dtype)
    out = d if out_dtype is None else dtype_of(where, "out_dtype", out_dtype)
    tensors = (tensor(_IN, dims, d), tensor(_OUT, dims, out))
    return assemble(OpKind.COPY, (name, phase), tensors, {}, attrs)
