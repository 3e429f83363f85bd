"""The kernels an EnergAIzer op-list entry launches, and the ones a model's list leaves out.

An entry (:mod:`opmodel.validation.artifact_ops`) is one host call; most launch one kernel.
The ones that launch more, and the kernels the measured program runs that its op list omits,
are what this module adds, each with the source that says so: eager attention's operand and
context copies, GPT-2's score division and causal ``where`` (:mod:`.artifact_gpt2`), cuDNN's
layout transforms around NCHW convolutions (per entry, :func:`kernels_from_entry`), Qwen2's
RMSNorm casts and mean, torchvision ResNet's batch norms and residual adds, and GPT-2's
``torch.full`` fills and causal ``where`` beside its score division, with the scores' shape
(per workload, :func:`complete_entries`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opmodel.core.op import LocalOp
from opmodel.validation.artifact_gpt2 import (
    DIVISION,
    FILL,
    WHERE,
    annotate_scores,
    fill_or_where,
    score_kernels,
)
from opmodel.validation.artifact_ops import (
    copy_op,
    entry_op,
    entry_parts,
    positive_int,
    well_formed,
)

__all__ = ["EntryKernels", "complete_entries", "elementwise_entry", "kernels_from_entry"]


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
    batch, m, n, k = (positive_int(params, name) for name in ("batch", "dimM", "dimN", "dimK"))
    if batch <= 1:
        return None
    dtype = op.tensors[0].dtype
    if m == n > k:  # Q K^T
        return (
            copy_op("query_copy", batch * m * k, dtype),
            copy_op("key_copy", batch * n * k, dtype),
            op,
        )
    if k == m > n:  # P V
        return (
            copy_op("value_copy", batch * k * n, dtype),
            op,
            copy_op("context_copy", batch * m * n, dtype),
        )
    return None


def elementwise_entry(entry: Any) -> tuple[str, int, str] | None:
    """``(op, elements, prec)`` of an elementwise entry; None for any other entry."""
    try:
        params, tags = entry_parts(entry)
    except ValueError:
        return None
    dim, op, prec = params.get("dim"), params.get("op"), params.get("prec")
    if tags[0] != "elementwise" or not isinstance(dim, int) or not isinstance(op, str):
        return None
    return op, dim, str(prec)


# Qwen2's RMSNorm as its list records it: x.pow(2) (unspecified_scalar, fp32), variance + eps
# (scalar_add, one value per row), rsqrt (unspecified_scalar, per row), x * rsqrt
# (pointwise_mul, fp32), weight * x (scalar_mul, bf16)
_RMS_NORM_LISTED = (
    ("unspecified_scalar", "fp32"),
    ("scalar_add", "fp32"),
    ("unspecified_scalar", "fp32"),
    ("pointwise_mul", "fp32"),
    ("scalar_mul", "bf16"),
)


def _qwen2_rms_norms(entries: list[Any]) -> list[Any]:
    """Qwen2's op lists with the kernels of each RMSNorm that they leave out.

    Hugging Face's ``Qwen2RMSNorm.forward`` (transformers 4.51.3, the artifact's pinned
    version) runs ``x = x.to(float32)``, ``variance = x.pow(2).mean(-1, keepdim=True)``,
    ``x = x * rsqrt(variance + eps)`` and ``weight * x.to(bfloat16)``. The lists record the
    pow, the add, the rsqrt and both multiplies (:data:`_RMS_NORM_LISTED`, ``N`` elements in
    ``R`` rows: the add and rsqrt have ``R``), but neither cast nor the mean, which the rsqrt's
    ``R``-element input shows ran. So before the pow comes the cast of ``N`` bf16 elements to
    fp32, after it the mean of ``R`` rows of ``N / R`` (an ATen reduction), and before the
    weight's multiply the cast of ``N`` fp32 elements back to bf16."""
    out: list[Any] = []
    elementwise = [elementwise_entry(e) for e in entries]  # each entry parsed once
    i = 0
    while i < len(entries):
        window = elementwise[i : i + len(_RMS_NORM_LISTED)]
        parsed = [w for w in window if w is not None]
        matches = len(parsed) == len(_RMS_NORM_LISTED) and all(
            (op, prec) == want for (op, _, prec), want in zip(parsed, _RMS_NORM_LISTED, strict=True)
        )
        if matches:
            elements, rows = parsed[0][1], parsed[1][1]
            shaped = parsed[2][1] == rows and elements == parsed[3][1] == parsed[4][1]
            matches = shaped and 0 < rows < elements and elements % rows == 0
        if not matches:
            out.append(entries[i])
            i += 1
            continue
        pow_, add, rsqrt, scale, weight = entries[i : i + len(_RMS_NORM_LISTED)]
        to_fp32 = {"dim": elements, "op": "typecast_to_fp32", "prec": "bf16"}
        mean = {"batch": rows, "dim": elements // rows, "prec": "fp32"}
        to_bf16 = {"dim": elements, "op": "typecast_to_bf16", "prec": "fp32"}
        out += [
            [to_fp32, ["elementwise"]],
            pow_,
            [mean, ["reduction", "fp32"]],
            add,
            rsqrt,
            scale,
            [to_bf16, ["elementwise"]],
            weight,
        ]
        i += len(_RMS_NORM_LISTED)
    return out


def complete_entries(entries: list[Any], family: str) -> list[Any]:
    """``entries`` with the kernels a family's model runs that its op list leaves out.

    ``qwen2``: each RMSNorm's casts and mean (:func:`_qwen2_rms_norms`).
    ``gpt2``: each score division with its shape, its two ``torch.full`` fills and the causal
    ``where`` (:func:`~.artifact_gpt2.annotate_scores`).
    ``resnet101`` is torchvision's ``resnet101`` in eval mode (the artifact's ``run_model.py``).
    Its op list has the 104 convolutions, the ReLUs and the classifier, but every
    convolution is followed by a ``BatchNorm2d`` and every ``Bottleneck`` block adds its
    identity before its last ReLU (``out += identity``), which the list omits. So after each
    ``conv2d`` entry comes an eval-mode batch norm of its output (``dimM x dimN`` elements, a
    one-input elementwise op with its own launch), and before every third ReLU after the stem's
    (the blocks' ReLUs come in threes: after ``bn1``, ``bn2`` and the add) comes the residual
    add of that ReLU's size. Other families are returned as they are; malformed entries pass
    through for :func:`kernels_from_entry` to reject."""
    if family == "qwen2":
        return _qwen2_rms_norms(entries)
    if family == "gpt2":
        return annotate_scores(entries)
    if family != "resnet101":
        return entries
    out: list[Any] = []
    relus = 0
    for entry, params, tags in well_formed(entries):
        if params is None:
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
    :func:`_attention_kernels`), a GPT-2 score division :func:`complete_entries` did not
    annotate (with the causal ``where`` in its slot: :func:`~.artifact_gpt2.score_kernels`)
    and a tensor-core ``conv2d``; the fills and ``where`` it adds are one kernel each
    (:func:`~.artifact_gpt2.fill_or_where`). PyTorch keeps
    activations and filters contiguous (NCHW, KCRS) unless a model asks for ``channels_last``,
    and cuDNN's tensor-core convolutions read and write NHWC, so for each such convolution cuDNN
    runs layout transforms around the implicit GEMM: the input NCHW -> NHWC and the filter KCRS
    -> KRSC before it, the output NHWC -> NCHW after it (``nchwToNhwcKernel`` /
    ``nhwcToNchwKernel`` in profiles; onnxruntime PR #17200 and NVIDIA DeepLearningExamples PR
    #1017 show them per convolution and the time they cost). Each transform reads and writes its
    tensor once, as a copy. An entry without the convolution fields (``b``, ``c``, ``hw``,
    ``m``, ``rs``) is the GEMM alone.
    """
    params, tags = entry_parts(entry)
    if tags[0] == "elementwise" and params.get("op") in (FILL, WHERE):
        added = fill_or_where(params)
        return EntryKernels(added, (added,))
    op = entry_op(params, tags)
    attention = _attention_kernels(op, params) if tags[0] == "gemm" else None
    if attention is not None:
        return EntryKernels(op, attention)
    if tags[0] == "elementwise" and params.get("op") == DIVISION:
        scores = score_kernels(op, params)
        return EntryKernels(scores[0], scores)
    if tags[0] != "conv2d" or not all(name in params for name in ("b", "c", "hw", "m", "rs")):
        return EntryKernels(op, (op,))
    images, channels, side = (
        positive_int(params, "b"),
        positive_int(params, "c"),
        positive_int(params, "hw"),
    )
    filters, window = positive_int(params, "m"), positive_int(params, "rs")
    dtype = op.tensors[0].dtype
    m, k = op.tensors[0].shape[-2:]
    if filters != op.tensors[2].shape[-1] or channels * window * window != k:
        msg = (
            f"conv2d m={filters}, c={channels}, rs={window} do not match its GEMM "
            f"(dimN={op.tensors[2].shape[-1]}, dimK={k})"
        )
        raise ValueError(msg)
    before = (
        copy_op("nchw_to_nhwc", images * channels * side * side, dtype),
        copy_op("kcrs_to_krsc", filters * k, dtype),
    )
    return EntryKernels(op, (*before, op, copy_op("nhwc_to_nchw", m * filters, dtype)))
