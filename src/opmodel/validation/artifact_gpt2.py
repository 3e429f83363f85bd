"""GPT-2's score scaling and causal mask in EnergAIzer's op lists, as the kernels ATen runs.

Hugging Face's GPT-2 attention (transformers 4.51.3, the artifact's pinned version,
``eager_attention_forward``) scales the scores ``[batch, heads, queries, keys]`` by
``attn_weights / torch.full([], sqrt(head size))`` and masks them with
``torch.where(causal_mask, attn_weights, mask_value)``, ``causal_mask`` a ``[1, 1, queries,
keys]`` bool slice of the model's ``bias`` buffer and ``mask_value`` another 0-dim tensor
from ``torch.full``. Both 0-dim tensors live on the GPU, so neither is the CPU scalar that
ATen folds into the kernel: each operation runs ATen's non-contiguous elementwise kernel
(:mod:`opmodel.models.streaming.aten_broadcast`), the division with its one coalesced
dimension (the divisor broadcast everywhere), the ``where`` with two (the batch and heads,
over which the mask broadcasts, and the queries and keys).

Each ``torch.full`` launches a one-element fill kernel on the GPU, and each of the four calls
(fill, division, fill, ``where``) is a host call of its own, a slot of the launch queue. The
op lists record the division as ``unspecified_tensor`` with only its element count and leave
the fills and the ``where`` out (the artifact's trace parser maps no ``full`` and no
``where``). :func:`annotate_scores` finds each division's shape from the scores' batched GEMM
before it (``Q K^T``: ``batch`` = batch x heads, ``dimM`` queries, ``dimN`` keys, the
division's ``dim`` their product) and puts the four entries in its place: a fill
(:data:`FILL`), the annotated division (:func:`score_kernels`: the broadcast ``div``), a fill
and the ``where`` (:data:`WHERE`; :func:`fill_or_where` builds the two added kinds). A
division without a matching GEMM keeps the old reading: two one-input kernels over its
elements in one slot. The mask is taken contiguous, ``queries x keys``: the
``bias`` buffer's rows are ``n_positions`` long (1,024 in GPT2Config unless the harness raised
it), so below 1,024 tokens the real slice has a row stride of its own and the kernel a third
dimension (10-15 more instructions an element), which this leaves out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from opmodel.core.dtypes import DType
from opmodel.core.enums import TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.validation.artifact_ops import copy_op, pytorch_op, well_formed

__all__ = ["FILL", "WHERE", "annotate_scores", "fill_or_where", "score_kernels"]

DIVISION = "unspecified_tensor"
FILL = "fill"  # torch.full([], value) on the GPU: a one-element fill kernel, a host call of its own
WHERE = "causal_where"
# the fields annotate_scores adds to a division's params: its scores' [batch, queries, keys]
SCORE_FIELDS = ("score_batch", "score_queries", "score_keys")


def _scores_gemm(params: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """``(batch, queries, keys)`` of an eager ``Q K^T`` bmm entry's params, else None."""
    sizes = _sizes(params, ("batch", "dimM", "dimN", "dimK"))
    if sizes is None:
        return None
    batch, m, n, k = sizes
    return (batch, m, n) if batch > 1 and m == n > k else None


def _sizes(params: Mapping[str, Any], names: tuple[str, ...]) -> tuple[int, ...] | None:
    """The positive integers ``params`` holds under ``names``; None if one is not."""
    sizes = tuple(params.get(name) for name in names)
    ok = all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes)
    return tuple(int(s) for s in sizes if isinstance(s, int)) if ok else None


def annotate_scores(entries: list[Any]) -> list[Any]:
    """``entries`` with each score division (``unspecified_tensor``) that follows a ``Q K^T``
    bmm of its element count given that bmm's ``[batch, queries, keys]`` (``SCORE_FIELDS``);
    other entries, malformed ones included, pass unchanged."""
    out: list[Any] = []
    scores: tuple[int, int, int] | None = None
    for entry, params, tags in well_formed(entries):
        if params is None:
            out.append(entry)
            continue
        if tags[0] == "gemm":
            scores = _scores_gemm(params)
        division = tags[0] == "elementwise" and params.get("op") == DIVISION
        if division and scores is not None and params.get("dim") == math.prod(scores):
            annotated = {**params, **dict(zip(SCORE_FIELDS, scores, strict=True))}
            fill = [{"dim": 1, "op": FILL, "prec": params.get("prec")}, ["elementwise"]]
            out += [fill, [annotated, tags], fill, [{**annotated, "op": WHERE}, tags]]
        else:
            out.append(entry)
    return out


def score_kernels(op: LocalOp, params: Mapping[str, Any]) -> tuple[LocalOp, ...]:
    """The division's kernel (an annotated entry: the broadcast ``div``); an entry without its
    scores' shape keeps the older reading, the one-input division ``op`` and the ``where``
    after it as a one-input kernel in the same launch slot."""
    shape = _sizes(params, SCORE_FIELDS)
    if shape is None:
        return (op, pytorch_op(WHERE, op.tensors, "scalar_mul"))
    scores, fill, out = _score_tensors(shape, op.tensors[0].dtype)
    return (pytorch_op(op.name, (scores, fill, out), "div"),)


def fill_or_where(params: Mapping[str, Any]) -> LocalOp:
    """The kernel of an entry :func:`annotate_scores` added: the one-element fill of
    ``torch.full``, or the causal ``where`` over the annotated scores; ValueError otherwise."""
    prec = params.get("prec")
    if prec not in ("bf16", "fp16", "fp32"):
        msg = f"{params.get('op')}: prec must be bf16, fp16 or fp32 (got {prec!r})"
        raise ValueError(msg)
    dtype = DType(prec)
    if params.get("op") == FILL:
        return copy_op(FILL, 1, dtype)
    shape = _sizes(params, SCORE_FIELDS)
    if shape is None:
        msg = f"{WHERE}: needs {', '.join(SCORE_FIELDS)}"
        raise ValueError(msg)
    scores, fill, out = _score_tensors(shape, dtype)
    mask = TensorSpec(TensorRole.INPUT, (1, *shape[1:]), DType.INT8)  # bool, one byte
    return pytorch_op(WHERE, (mask, scores, fill, out), "where")


def _score_tensors(
    shape: tuple[int, ...], dtype: DType
) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
    """The scores ``[batch, queries, keys]``, the 0-dim fill (``[1]``) and the output."""
    scores = TensorSpec(TensorRole.INPUT, shape, dtype)
    fill = TensorSpec(TensorRole.INPUT, (1,), dtype)  # torch.full([], ...) on the GPU
    return scores, fill, TensorSpec(TensorRole.OUTPUT, shape, dtype)
