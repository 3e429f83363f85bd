"""The two backward GEMMs of a forward GEMM (README, "A training step's ops").

For ``C = A B`` a training step runs the input gradient ``dA = dC B^T`` and the weight gradient
``dB = A^T dC``, each a GEMM of the forward's kind with its own operands, in phase
``train_bwd``. Each gradient is written in the layout its operand is stored in (``dA`` as
``[k, m]`` when A is stored so, ``dB`` as ``[n, k]`` when B is), so the transposes follow from
the forward's. Every backward GEMM does the forward's FLOPs. A batched GEMM's broadcast B gets
one weight gradient summed over the batch: a GEMM over the ``batch x m`` rows. A grouped GEMM
(groups along M, the experts' GEMMs) gets its input gradient grouped along M and its weight
gradient grouped along K, with the same ``group_sizes``.
"""

from __future__ import annotations

from collections.abc import Mapping

from opmodel.core.attrs import AttrValue
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.core.views_matmul import GemmView

__all__ = ["gemm_backward_of"]

_GEMM_KINDS = (OpKind.GEMM, OpKind.BATCHED_GEMM, OpKind.GROUPED_GEMM)


def _spec(role: TensorRole, like: TensorSpec, shape: tuple[int, ...]) -> TensorSpec:
    return TensorSpec(role, shape, like.dtype)


def _op(
    forward: LocalOp,
    suffix: str,
    kind: OpKind,
    tensors: tuple[TensorSpec, ...],
    **attrs: AttrValue,
) -> LocalOp:
    keep = {name: forward.attrs[name] for name in ("compute_dtype",) if name in forward.attrs}
    return LocalOp(
        name=f"{forward.name}:{suffix}",
        kind=kind,
        phase=Phase.TRAIN_BWD,
        tensors=tensors,
        attrs={**keep, **attrs},
    )


def _input_grad(
    op: LocalOp, v: GemmView, lead: tuple[int, ...], grouped: Mapping[str, AttrValue]
) -> LocalOp:
    """``dA = dC B^T`` (``[m, k]``), or ``dA^T = B dC^T`` (``[k, m]``) when A is stored so."""
    dc = _spec(TensorRole.INPUT, v.c, v.c.shape)
    if not v.transpose_a:
        b = _spec(TensorRole.WEIGHT, v.b, v.b.shape)
        out = _spec(TensorRole.OUTPUT, v.a, (*lead, v.m, v.k))
        return _op(
            op, "input_grad", op.kind, (dc, b, out), transpose_b=not v.transpose_b, **grouped
        )
    b_in = _spec(TensorRole.INPUT, v.b, v.b.shape)
    dc_w = _spec(TensorRole.WEIGHT, v.c, v.c.shape)
    out = _spec(TensorRole.OUTPUT, v.a, (*lead, v.k, v.m))
    return _op(
        op, "input_grad", op.kind, (b_in, dc_w, out), transpose_a=v.transpose_b, transpose_b=True
    )


def _weight_grad(
    op: LocalOp, v: GemmView, kind: OpKind, lead: tuple[int, ...], grouped: Mapping[str, AttrValue]
) -> LocalOp:
    """``dB = A^T dC`` (``[k, n]``), or ``dB^T = dC^T A`` (``[n, k]``) when B is stored so;
    ``kind`` is the forward's, or a GEMM summing a broadcast B's gradient over the batch, or a
    grouped GEMM along K."""
    a_shape = v.a.shape if kind is op.kind or kind is OpKind.GROUPED_GEMM else (v.batch * v.m, v.k)
    c_shape = v.c.shape if kind is op.kind or kind is OpKind.GROUPED_GEMM else (v.batch * v.m, v.n)
    a = _spec(TensorRole.INPUT, v.a, a_shape)
    dc = _spec(TensorRole.WEIGHT, v.c, c_shape)
    if not v.transpose_b:
        out = _spec(TensorRole.OUTPUT, v.b, (*lead, v.k, v.n))
        return _op(op, "weight_grad", kind, (a, dc, out), transpose_a=not v.transpose_a, **grouped)
    dc_in = _spec(TensorRole.INPUT, v.c, c_shape)
    a_w = _spec(TensorRole.WEIGHT, v.a, a_shape)
    out = _spec(TensorRole.OUTPUT, v.b, (*lead, v.n, v.k))
    return _op(
        op,
        "weight_grad",
        kind,
        (dc_in, a_w, out),
        transpose_a=True,
        transpose_b=v.transpose_a,
        **grouped,
    )


def gemm_backward_of(op: LocalOp) -> tuple[LocalOp, LocalOp]:
    """``(input gradient, weight gradient)`` GEMMs of the forward GEMM, batched GEMM or grouped
    GEMM ``op`` (module docstring), named ``NAME:input_grad`` and ``NAME:weight_grad``; an
    OpValidationError for another kind or a grouped GEMM that is a weight gradient already."""
    if not isinstance(op, LocalOp):
        msg = f"gemm_backward_of: expected a LocalOp (got {type(op).__name__})"
        raise OpValidationError(msg)
    where = f"op '{op.name}' ({op.kind.value})"
    view = op.view
    if op.kind not in _GEMM_KINDS or not isinstance(view, GemmView):
        kinds = ", ".join(k.value for k in _GEMM_KINDS)
        raise OpValidationError(f"{where}: has no backward GEMMs (kinds with them: {kinds})")
    if view.groups_along_k:
        raise OpValidationError(f"{where}: is a weight gradient already (grouped along K)")
    if op.kind is OpKind.GROUPED_GEMM:
        groups = view.b.shape[0]
        sizes: Mapping[str, AttrValue] = {"group_sizes": view.group_sizes}
        return _input_grad(op, view, (), sizes), _weight_grad(op, view, op.kind, (groups,), sizes)
    batched = op.kind is OpKind.BATCHED_GEMM
    lead = (view.batch,) if batched else ()
    if not view.broadcast_b:
        return _input_grad(op, view, lead, {}), _weight_grad(op, view, op.kind, lead, {})
    if view.transpose_a:
        raise OpValidationError(
            f"{where}: a broadcast B's gradient sums over the batch, which needs A's rows "
            "contiguous: give A as [batch, m, k] (transpose_a false)"
        )
    return _input_grad(op, view, lead, {}), _weight_grad(op, view, OpKind.GEMM, (), {})
