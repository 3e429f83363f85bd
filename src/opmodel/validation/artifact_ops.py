"""EnergAIzer op-list entries as LocalOps (the ops one forward pass of a model launches).

Each entry of ``workloads/all/<workload>.json`` is ``[params, tags]`` (data/energaizer/SOURCE.md):

* ``gemm`` (``batch``, ``dimM``, ``dimN``, ``dimK``, ``useTensorCore``; tags ``tc, bf16_bf16`` or
  ``cuda, fp32_fp32``): a GEMM, or a batched GEMM when ``batch > 1`` (eager attention's QK^T and
  PV products). ``conv2d`` carries its implicit-GEMM dimensions and runs as that GEMM (cuDNN's
  implicit GEMM; the im2col re-reads of the input are L2 traffic the GEMM view does not count).
  With its convolution fields (``b``, ``c``, ``hw``, ``m``, ``rs``) it also runs the layout
  transforms of :func:`kernels_from_entry`.
* ``softmax`` / ``layernorm`` (``batch`` rows of ``dim``, ``prec``): torch.softmax and
  torch.nn.LayerNorm (two weights), ATen kernels (``implementation: pytorch``).
* ``elementwise`` (``dim`` elements, ``op``, ``prec``): ``pointwise_add`` / ``pointwise_mul``
  take two inputs (add, mul); ``scalar_add``, ``scalar_mul``, ``unspecified_scalar`` and
  ``unspecified_tensor`` (GPT-2's score division by a 0-dim tensor) one; ``relu``, ``silu``,
  ``gelu``, ``tanh`` are those functions; ``typecast_to_fp32`` / ``typecast_to_bf16`` are
  copies that cast.

An entry of another kind raises ValueError with the reason, which the caller counts. The
kernels the measured program runs beyond its list are added here too: per entry by
:func:`kernels_from_entry` (attention's copies, GPT-2's causal ``where``, convolutions' layout
transforms), per workload by :func:`complete_entries` (ResNet's batch norms and residual adds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opmodel.core.attrs import AttrValue
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["EntryKernels", "complete_entries", "kernels_from_entry", "op_from_entry"]

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


def _int(params: Mapping[str, Any], name: str) -> int:
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"{name} must be a positive integer (got {value!r})"
        raise ValueError(msg)
    return value


def _prec(params: Mapping[str, Any], name: str = "prec") -> DType:
    value = params.get(name)
    if value not in _PREC:
        msg = f"{name} must be one of {', '.join(_PREC)} (got {value!r})"
        raise ValueError(msg)
    return _PREC[value]


def _op(
    name: str, kind: OpKind, tensors: tuple[TensorSpec, ...], attrs: dict[str, AttrValue]
) -> LocalOp:
    return LocalOp(name=name, kind=kind, phase=Phase.INFERENCE, tensors=tensors, attrs=attrs)


def _gemm(params: Mapping[str, Any], kind: str) -> LocalOp:
    batch, m = _int(params, "batch"), _int(params, "dimM")
    n, k = _int(params, "dimN"), _int(params, "dimK")
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
    rows, length, dtype = _int(params, "batch"), _int(params, "dim"), _prec(params)
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


def _elementwise(params: Mapping[str, Any]) -> LocalOp:
    elements, dtype, name = _int(params, "dim"), _prec(params), params.get("op")
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
    return _op(str(name), OpKind.ELEMENTWISE, tensors, {"function": function, **_PYTORCH})


def _parts(entry: object) -> tuple[dict[str, Any], list[Any]]:
    """``(params, tags)`` of a ``[params, tags]`` entry; ValueError otherwise."""
    if isinstance(entry, list | tuple) and len(entry) == 2:
        params, tags = entry
        if isinstance(params, dict) and isinstance(tags, list) and tags:
            return params, tags
    msg = "entry is not [params, tags]"
    raise ValueError(msg)


def op_from_entry(entry: object) -> LocalOp:
    """The LocalOp of one ``[params, tags]`` entry; ValueError with the reason otherwise."""
    return _op_of(*_parts(entry))


def _op_of(params: dict[str, Any], tags: list[Any]) -> LocalOp:
    kind = tags[0]
    if kind in ("gemm", "conv2d"):
        return _gemm(params, kind)
    if kind == "softmax":
        return _row(params, OpKind.SOFTMAX)
    if kind == "layernorm":
        return _row(params, OpKind.LAYERNORM)
    if kind == "elementwise":
        return _elementwise(params)
    msg = f"op kind {kind!r} is not mapped"
    raise ValueError(msg)


def _transform(name: str, elements: int, dtype: DType) -> LocalOp:
    shape = (elements,)
    return _op(
        name,
        OpKind.COPY,
        (TensorSpec(TensorRole.INPUT, shape, dtype), TensorSpec(TensorRole.OUTPUT, shape, dtype)),
        {},
    )


def _attention_kernels(op: LocalOp, params: Mapping[str, Any]) -> tuple[LocalOp, ...] | None:
    """An eager attention bmm with the copies its host call makes, or None for another GEMM.

    ``torch.matmul`` on 4-D operands folds the batch dimensions with ``reshape``
    (``_matmul_impl`` in ATen's LinearAlgebra.cpp), which copies an operand that is not
    viewable as ``[batch x heads, rows, cols]``. Hugging Face attention (transformers 4.51.3,
    the artifact's pinned version) splits heads by ``view`` and ``transpose`` of the
    projection's output, so the scores' matmul (``Q K^T``: rows = cols = sequence, inner =
    head size) copies Q and K first, the context matmul (``P V``: inner = rows = sequence) copies
    V (Qwen2's grouped K and V are materialised by ``repeat_kv`` instead: the same bytes
    written), and merging the heads back (``transpose(1, 2)`` then ``reshape`` or
    ``contiguous``) copies the context. Each copy is predicted as a copy of its tensor."""
    batch, m, n, k = (_int(params, name) for name in ("batch", "dimM", "dimN", "dimK"))
    if batch <= 1:
        return None
    dtype = op.tensors[0].dtype
    if m == n > k:  # Q K^T
        return (
            _transform("query_copy", batch * m * k, dtype),
            _transform("key_copy", batch * n * k, dtype),
            op,
        )
    if k == m > n:  # P V
        return (
            _transform("value_copy", batch * k * n, dtype),
            op,
            _transform("context_copy", batch * m * n, dtype),
        )
    return None


def _causal_where(op: LocalOp) -> tuple[LocalOp, ...]:
    """GPT-2's score division and the causal ``torch.where`` that follows it.

    Hugging Face's GPT-2 attention (transformers 4.51.3, ``eager_attention_forward``) divides
    the scores by a 0-dim tensor, the lists' ``unspecified_tensor`` entry, then masks them with
    ``torch.where(causal_mask, scores, min)``, which the lists leave out. The mask is a
    ``[1, 1, seq, seq]`` bool slice that every batch and head shares, so it stays in L2; the
    ``where`` reads and writes the scores once, predicted as a one-input elementwise op."""
    where = _op(
        "causal_where",
        OpKind.ELEMENTWISE,
        op.tensors,
        {"function": "scalar_mul", **_PYTORCH},
    )
    return (op, where)


def complete_entries(entries: list[Any], family: str) -> list[Any]:
    """``entries`` with the kernels a family's model runs that its op list leaves out.

    ``resnet101`` is torchvision's ``resnet101`` in eval mode (the artifact's ``run_model.py``).
    Its op list has the 104 convolutions, the ReLUs and the classifier, but every
    convolution is followed by a ``BatchNorm2d`` and every ``Bottleneck`` block adds its
    identity before its last ReLU (``out += identity``), which the list omits. So after each
    ``conv2d`` entry comes an eval-mode batch norm of its output (``dimM x dimN`` elements, a
    one-input elementwise op with its own launch), and before every third ReLU after the stem's
    (the blocks' ReLUs come in threes: after ``bn1``, ``bn2`` and the add) comes the residual
    add of that ReLU's size. Other families are returned as they are; malformed entries pass
    through for :func:`kernels_from_entry` to reject."""
    if family != "resnet101":
        return entries
    out: list[Any] = []
    relus = 0
    for entry in entries:
        try:
            params, tags = _parts(entry)
        except ValueError:
            out.append(entry)
            continue
        if tags[0] == "elementwise" and params.get("op") == "relu":
            relus += 1
            if relus > 1 and (relus - 1) % 3 == 0:
                add = {"dim": params.get("dim"), "op": "pointwise_add", "prec": params.get("prec")}
                out.append([add, ["elementwise"]])
        out.append(entry)
        if tags[0] == "conv2d" and isinstance(params.get("dimM"), int):
            elements = params["dimM"] * params.get("dimN", 0)
            norm = {"dim": elements, "op": "batch_norm_eval", "prec": params.get("precM")}
            out.append([norm, ["elementwise"]])
    return out


@dataclass(frozen=True, slots=True)
class EntryKernels:
    """One entry's op (``op``) and the kernels its host call launches, in order (``kernels``,
    ``op`` among them)."""

    op: LocalOp
    kernels: tuple[LocalOp, ...]


def kernels_from_entry(entry: object) -> EntryKernels:
    """The kernels one entry launches from one host call; ValueError as :func:`op_from_entry`.

    Every entry is one kernel except an eager attention bmm (its operand and context copies:
    :func:`_attention_kernels`), GPT-2's score division (and the causal ``where`` after it:
    :func:`_causal_where`) and a tensor-core ``conv2d``. PyTorch keeps activations and
    filters contiguous (NCHW, KCRS) unless a model asks for ``channels_last``, and cuDNN's
    tensor-core convolutions read and write NHWC, so for each such convolution cuDNN runs
    layout transforms around the implicit GEMM: the input NCHW -> NHWC and the filter
    KCRS -> KRSC before it, the output NHWC -> NCHW after it (``nchwToNhwcKernel`` /
    ``nhwcToNchwKernel`` in profiles; onnxruntime PR #17200 and NVIDIA DeepLearningExamples PR
    #1017 show them per convolution and the time they cost). Each transform reads and writes
    its tensor once, as a copy. An entry without the convolution fields (``b``, ``c``,
    ``hw``, ``m``, ``rs``) is the GEMM alone.
    """
    params, tags = _parts(entry)
    op = _op_of(params, tags)
    attention = _attention_kernels(op, params) if tags[0] == "gemm" else None
    if attention is not None:
        return EntryKernels(op, attention)
    if tags[0] == "elementwise" and params.get("op") == "unspecified_tensor":
        return EntryKernels(op, _causal_where(op))
    if tags[0] != "conv2d" or not all(name in params for name in ("b", "c", "hw", "m", "rs")):
        return EntryKernels(op, (op,))
    images, channels, side = _int(params, "b"), _int(params, "c"), _int(params, "hw")
    filters, window = _int(params, "m"), _int(params, "rs")
    dtype = op.tensors[0].dtype
    m, k = op.tensors[0].shape[-2:]
    if filters != op.tensors[2].shape[-1] or channels * window * window != k:
        msg = (
            f"conv2d m={filters}, c={channels}, rs={window} do not match its GEMM "
            f"(dimN={op.tensors[2].shape[-1]}, dimK={k})"
        )
        raise ValueError(msg)
    before = (
        _transform("nchw_to_nhwc", images * channels * side * side, dtype),
        _transform("kcrs_to_krsc", filters * k, dtype),
    )
    return EntryKernels(op, (*before, op, _transform("nhwc_to_nchw", m * filters, dtype)))
