"""EnergAIzer op-list entries as LocalOps (the ops one forward pass of a model launches).

Each entry of ``workloads/all/<workload>.json`` is ``[params, tags]`` (data/energaizer/SOURCE.md):

* ``gemm`` (``batch``, ``dimM``, ``dimN``, ``dimK``, ``useTensorCore``; tags ``tc, bf16_bf16`` or
  ``cuda, fp32_fp32``): a GEMM, or a batched GEMM when ``batch > 1`` (eager attention's QK^T and
  PV products). ``conv2d`` carries its implicit-GEMM dimensions and runs as that GEMM (cuDNN's
  implicit GEMM; the im2col re-reads of the input are L2 traffic the GEMM view does not count).
  With its convolution fields (``b``, ``c``, ``hw``, ``m``, ``rs``) it also runs the layout
  transforms of :func:`~opmodel.validation.artifact_kernels.kernels_from_entry`.
* ``softmax`` / ``layernorm`` (``batch`` rows of ``dim``, ``prec``): torch.softmax and
  torch.nn.LayerNorm (two weights), ATen kernels (``implementation: pytorch``).
* ``reduction`` (``batch`` rows of ``dim``, ``prec``): a mean over each row, ATen's reduction
  kernel. The lists have none; :func:`~opmodel.validation.artifact_kernels.complete_entries`
  adds Qwen2's RMSNorm means in this form.
* ``elementwise`` (``dim`` elements, ``op``, ``prec``): ``pointwise_add`` / ``pointwise_mul``
  take two inputs (add, mul); ``scalar_add``, ``scalar_mul``, ``unspecified_scalar`` and
  ``unspecified_tensor`` (GPT-2's score division by a 0-dim tensor) one; ``relu``, ``silu``,
  ``gelu``, ``tanh`` are those functions; ``typecast_to_fp32`` / ``typecast_to_bf16`` are
  copies that cast.

An entry of another kind raises ValueError with the reason, which the caller counts. The
kernels the measured program runs beyond its list are added here too: per entry by
:func:`~opmodel.validation.artifact_kernels.kernels_from_entry` (attention's copies, GPT-2's
causal ``where``, convolutions' layout transforms), per workload by
:func:`~opmodel.validation.artifact_kernels.complete_entries` (Qwen2's RMSNorm casts and means,
ResNet's batch norms and residual adds).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from opmodel.core.attrs import AttrValue
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec

__all__ = [
    "copy_op",
    "entry_op",
    "entry_parts",
    "op_from_entry",
    "positive_int",
    "pytorch_op",
    "well_formed",
]

_PREC = {"bf16": DType.BF16, "fp32": DType.FP32, "fp16": DType.FP16}
_BINARY = {"pointwise_add": "add", "pointwise_mul": "mul"}
_UNARY = {
    "scalar_add": "scalar_add",
    "scalar_mul": "scalar_mul",
    "unspecified_scalar": "scalar_mul",
    # the lists' only such op is GPT-2's division of its attention scores by a 0-dim tensor
    # (torch.full([], sqrt(head size))): one full-size operand (_causal_where)
    "unspecified_tensor": "scalar_mul",
    # eval-mode batch norm: x x scale + shift per channel, one read and one write
    # (complete_entries adds it; the lists have no such op)
    "batch_norm_eval": "scalar_mul",
    "relu": "relu",
    "silu": "silu",
    "gelu": "gelu",
    "tanh": "tanh",
}
_CASTS = {"typecast_to_fp32": DType.FP32, "typecast_to_bf16": DType.BF16}
_PYTORCH: dict[str, AttrValue] = {"implementation": "pytorch"}


def positive_int(params: Mapping[str, Any], name: str) -> int:
    """``params[name]`` as an integer >= 1; ValueError naming the field otherwise."""
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"{name} must be a positive integer (got {value!r})"
        raise ValueError(msg)
    return value


def _prec(params: Mapping[str, Any], name: str = "prec") -> DType:
    value = params.get(name)
    if not isinstance(value, str) or value not in _PREC:
        msg = f"{name} must be one of {', '.join(_PREC)} (got {value!r})"
        raise ValueError(msg)
    return _PREC[value]


def _op(
    name: str, kind: OpKind, tensors: tuple[TensorSpec, ...], attrs: dict[str, AttrValue]
) -> LocalOp:
    return LocalOp(name=name, kind=kind, phase=Phase.INFERENCE, tensors=tensors, attrs=attrs)


def _gemm(params: Mapping[str, Any], kind: str) -> LocalOp:
    batch, m = positive_int(params, "batch"), positive_int(params, "dimM")
    n, k = positive_int(params, "dimN"), positive_int(params, "dimK")
    dtype = _prec(params, "precM")
    lead = (batch,) if batch > 1 else ()
    return _op(
        kind,
        OpKind.BATCHED_GEMM if batch > 1 else OpKind.GEMM,
        (
            TensorSpec(TensorRole.INPUT, (*lead, m, k), dtype),
            TensorSpec(TensorRole.WEIGHT, (*lead, k, n), dtype),
            TensorSpec(TensorRole.OUTPUT, (*lead, m, n), dtype),
        ),
        {},
    )


def _row(params: Mapping[str, Any], kind: OpKind) -> LocalOp:
    rows, length, dtype = positive_int(params, "batch"), positive_int(params, "dim"), _prec(params)
    weights = 2 if kind is OpKind.LAYERNORM else 0
    return _op(
        kind.value,
        kind,
        (
            TensorSpec(TensorRole.INPUT, (rows, length), dtype),
            *(TensorSpec(TensorRole.WEIGHT, (length,), dtype) for _ in range(weights)),
            TensorSpec(TensorRole.OUTPUT, (rows, length), dtype),
        ),
        dict(_PYTORCH),
    )


def _reduction(params: Mapping[str, Any]) -> LocalOp:
    rows, length, dtype = positive_int(params, "batch"), positive_int(params, "dim"), _prec(params)
    return _op(
        "mean",
        OpKind.REDUCTION,
        (
            TensorSpec(TensorRole.INPUT, (rows, length), dtype),
            TensorSpec(TensorRole.OUTPUT, (rows,), dtype),
        ),
        {"function": "mean"},
    )


def _elementwise(params: Mapping[str, Any]) -> LocalOp:
    elements, dtype, name = positive_int(params, "dim"), _prec(params), params.get("op")
    if not isinstance(name, str):
        msg = f"elementwise op must be a name (got {name!r})"
        raise ValueError(msg)
    shape = (elements,)
    if name in _CASTS:
        return _op(
            str(name),
            OpKind.COPY,
            (
                TensorSpec(TensorRole.INPUT, shape, dtype),
                TensorSpec(TensorRole.OUTPUT, shape, _CASTS[name]),
            ),
            {},
        )
    if name in _BINARY:
        function, inputs = _BINARY[name], 2
    elif name in _UNARY:
        function, inputs = _UNARY[name], 1
    else:
        msg = f"elementwise op {name!r} is not mapped"
        raise ValueError(msg)
    tensors = (
        *(TensorSpec(TensorRole.INPUT, shape, dtype) for _ in range(inputs)),
        TensorSpec(TensorRole.OUTPUT, shape, dtype),
    )
    return pytorch_op(str(name), tensors, function)


def entry_parts(entry: object) -> tuple[dict[str, Any], list[Any]]:
    """``(params, tags)`` of a ``[params, tags]`` entry; ValueError otherwise."""
    if isinstance(entry, list | tuple) and len(entry) == 2:
        params, tags = entry
        if isinstance(params, dict) and isinstance(tags, list) and tags:
            return params, tags
    msg = "entry is not [params, tags]"
    raise ValueError(msg)


def well_formed(entries: list[Any]) -> Iterator[tuple[Any, dict[str, Any] | None, list[Any]]]:
    """Each entry with its ``(params, tags)``; a malformed one with ``(None, [])``, for the
    caller to pass on unchanged (:func:`kernels_from_entry` rejects it later)."""
    for entry in entries:
        try:
            params, tags = entry_parts(entry)
        except ValueError:
            yield entry, None, []
            continue
        yield entry, params, tags


def op_from_entry(entry: object) -> LocalOp:
    """The LocalOp of one ``[params, tags]`` entry; ValueError with the reason otherwise."""
    return entry_op(*entry_parts(entry))


def entry_op(params: dict[str, Any], tags: list[Any]) -> LocalOp:
    """The LocalOp of an entry's ``params`` and ``tags``; ValueError with the reason."""
    kind = tags[0]
    if kind in ("gemm", "conv2d"):
        return _gemm(params, kind)
    if kind == "softmax":
        return _row(params, OpKind.SOFTMAX)
    if kind == "layernorm":
        return _row(params, OpKind.LAYERNORM)
    if kind == "elementwise":
        return _elementwise(params)
    if kind == "reduction":
        return _reduction(params)
    msg = f"op kind {kind!r} is not mapped"
    raise ValueError(msg)


def copy_op(name: str, elements: int, dtype: DType) -> LocalOp:
    """A copy kernel of ``elements`` elements: one read and one write of each."""
    shape = (elements,)
    return _op(
        name,
        OpKind.COPY,
        (TensorSpec(TensorRole.INPUT, shape, dtype), TensorSpec(TensorRole.OUTPUT, shape, dtype)),
        {},
    )


def pytorch_op(name: str, tensors: tuple[TensorSpec, ...], function: str) -> LocalOp:
    """An ATen elementwise kernel computing ``function`` over ``tensors``."""
    return _op(name, OpKind.ELEMENTWISE, tensors, {"function": function, **_PYTORCH})
