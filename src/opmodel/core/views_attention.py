"""The attention view's parsing and checks: Q, K, V, O (and a backward pass's dO, dQ, dK, dV).

Conventions: :mod:`opmodel.core.views_matmul` (where :class:`AttentionView` lives). With attr
``shared_kv`` the values are the first ``head_dim_v`` channels of each key row, stored once
(MLA's absorbed form): V must be no wider than K, of K's dtype, in a forward pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from opmodel.core.enums import OpKind, TensorRole
from opmodel.core.viewcheck import compute_dtype, fail, one, only_roles
from opmodel.core.views_attention_bwd import backward_tensors
from opmodel.core.views_matmul import AttentionView

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["attention_view"]


def _qkv(op: LocalOp) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
    inputs = op.tensors_with(TensorRole.INPUT)
    tagged = {t.layout: t for t in inputs if t.layout in ("q", "k", "v")}
    if len(inputs) != 3:
        raise fail(op, f"needs three input tensors Q, K, V; got {len(inputs)}")
    if tagged and len(tagged) != 3:
        raise fail(op, "tag all of Q, K, V with layout q/k/v, or none (then they are in order)")
    if tagged:
        return tagged["q"], tagged["k"], tagged["v"]
    return inputs[0], inputs[1], inputs[2]


def _check_attention_shapes(
    op: LocalOp, q: TensorSpec, k: TensorSpec, v: TensorSpec, o: TensorSpec
) -> None:
    """Q, K, V and O share the batch; K and V heads and sequence; Q and K the head dim; the
    query heads are a multiple of the KV heads; O is ``[batch, heads_q, seq_q, head_dim_v]``."""
    b, hq, sq, dqk = q.shape
    _, hkv, skv, dk = k.shape
    if k.shape[0] != b or v.shape[0] != b or o.shape[0] != b:
        raise fail(op, "Q, K, V and O must share the batch dim")
    if v.shape[1] != hkv or v.shape[2] != skv:
        raise fail(op, f"K {list(k.shape)} and V {list(v.shape)} must share heads and seq")
    if dk != dqk:
        raise fail(op, f"Q head_dim {dqk} differs from K head_dim {dk}")
    if hq % hkv:
        raise fail(op, f"K/V heads {hkv} must divide Q heads {hq} (GQA/MQA)")
    if o.shape != (b, hq, sq, v.shape[3]):
        raise fail(op, f"O must be {[b, hq, sq, v.shape[3]]}; got {list(o.shape)}")


def _attention_tensors(
    op: LocalOp,
) -> tuple[TensorSpec, TensorSpec, TensorSpec, TensorSpec, TensorSpec | None]:
    """Q, K, V, O and, for the backward pass (a grad tensor), dO."""
    if op.tensors_with(TensorRole.GRAD):
        only_roles(op, (TensorRole.INPUT, TensorRole.GRAD, TensorRole.OUTPUT, TensorRole.WORKSPACE))
        (q, k, v, o), grad_o = backward_tensors(op)
        return q, k, v, o, grad_o
    only_roles(op, (TensorRole.INPUT, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    q, k, v = _qkv(op)
    return q, k, v, one(op, TensorRole.OUTPUT, "O"), None


def attention_view(op: LocalOp) -> AttentionView:
    """Parse and check attention Q/K/V/O (or its backward: module docstring); raise
    OpValidationError naming the problem."""
    q, k, v, o, grad_o = _attention_tensors(op)
    for name, tensor in (("Q", q), ("K", k), ("V", v), ("O", o)):
        if len(tensor.shape) != 4:
            raise fail(
                op, f"{name} must be [batch, heads, seq, head_dim]; got {list(tensor.shape)}"
            )
    _check_attention_shapes(op, q, k, v, o)
    (b, hq, sq, dqk), (_, hkv, skv, _) = q.shape, k.shape
    causal = op.attrs.get("causal", False) is True
    if causal and sq > skv:
        raise fail(op, f"causal attention needs seq_q <= seq_kv (got {sq} > {skv})")
    window = op.attrs.get("window")
    if window is not None and not causal:
        raise fail(op, "attrs.window needs causal: true (a sliding window is a causal band)")
    shared_kv = op.attrs.get("shared_kv", False) is True
    if shared_kv:
        _check_shared_kv(op, k, v, grad_o)
    return AttentionView(
        batch=b,
        heads_q=hq,
        heads_kv=hkv,
        seq_q=sq,
        seq_kv=skv,
        head_dim_qk=dqk,
        head_dim_v=v.shape[3],
        causal=causal,
        q=q,
        k=k,
        v=v,
        o=o,
        compute_dtype=compute_dtype(op, q.dtype),
        window=window if isinstance(window, int) else None,
        grad_o=grad_o,
        shared_kv=shared_kv,
        **_kernel_options(op, shared_kv),
        **_lengths(op, (b, sq, skv), causal),
    )


class _KernelOptions(TypedDict):
    page_size: int | None
    in_order: bool
    l2_dirty_bytes: int
    kernel_choice: str | None


def _kernel_options(op: LocalOp, shared_kv: bool) -> _KernelOptions:
    """The view's fields from the attrs that shape the kernel rather than the math: a paged
    cache, the blocks' order, another kernel's dirty lines, the kernel family."""
    page, dirty = op.attrs.get("page_size"), op.attrs.get("l2_dirty_bytes")
    return _KernelOptions(
        page_size=page if isinstance(page, int) else None,
        in_order=op.attrs.get("cta_order") == "in_order",
        l2_dirty_bytes=dirty if isinstance(dirty, int) else 0,
        kernel_choice=_kernel_choice(op, shared_kv),
    )


def _kernel_choice(op: LocalOp, shared_kv: bool) -> str | None:
    """Attr ``attention_kernel``: ``flashmla`` decodes MLA's shared latent cache only."""
    choice = op.attrs.get("attention_kernel")
    if choice == "flashmla" and not (shared_kv and op.kind is OpKind.ATTENTION_DECODE):
        raise fail(
            op,
            "attrs.attention_kernel: flashmla needs an attention_decode with shared_kv: true "
            "(FlashMLA decodes MLA's latent cache)",
        )
    return choice if isinstance(choice, str) else None


def _lengths(
    op: LocalOp, dims: tuple[int, int, int], causal: bool
) -> dict[str, tuple[int, ...] | None]:
    """Attrs ``kv_lengths`` and ``q_lengths`` (``dims``: batch, seq_q, seq_kv): one entry per
    request, within the tensors' seq dims; ``q_lengths`` with ``kv_lengths``; causal, each
    request's keys at least its queries."""
    batch, seq_q, seq_kv = dims
    keys, queries = op.attrs.get("kv_lengths"), op.attrs.get("q_lengths")
    if queries is not None and keys is None:
        raise fail(op, "attrs.q_lengths needs attrs.kv_lengths (the keys of each request)")
    for name, given, dim, what in (
        ("kv_lengths", keys, seq_kv, "K's seq dim"),
        ("q_lengths", queries, seq_q, "Q's seq dim"),
    ):
        assert given is None or isinstance(given, tuple)  # validated and frozen by LocalOp
        if given is not None and len(given) != batch:
            raise fail(
                op, f"attrs.{name}: needs one entry per request (batch {batch}); got {len(given)}"
            )
        if given is not None and (longest := max(given)) > dim:
            raise fail(op, f"attrs.{name}: {longest} exceeds {what} {dim} (the padded length)")
    if causal and isinstance(keys, tuple):
        needed = queries if isinstance(queries, tuple) else (seq_q,) * batch
        short = next(((k, q) for k, q in zip(keys, needed, strict=True) if k < q), None)
        if short is not None:
            raise fail(
                op,
                f"attrs.kv_lengths: {short[0]} is shorter than the {short[1]} query tokens "
                "(causal attention needs each request's queries <= its keys)",
            )
    return {
        "kv_lengths": keys if isinstance(keys, tuple) else None,
        "q_lengths": queries if isinstance(queries, tuple) else None,
    }


def _check_shared_kv(op: LocalOp, k: TensorSpec, v: TensorSpec, grad_o: TensorSpec | None) -> None:
    """V must be a channel prefix of K (attr ``shared_kv``): no wider than K, of K's dtype, and
    a forward pass (MLA trains in its multi-head form, with K and V apart)."""
    if grad_o is not None:
        raise fail(
            op,
            "attrs.shared_kv: a forward pass only (MLA's backward runs its multi-head form, "
            "with separate K and V)",
        )
    if v.shape[3] > k.shape[3]:
        raise fail(
            op,
            f"attrs.shared_kv: V head_dim {v.shape[3]} must not exceed K head_dim {k.shape[3]} "
            "(V is the first channels of each key row)",
        )
    if v.dtype is not k.dtype:
        raise fail(
            op,
            f"attrs.shared_kv: V dtype {v.dtype.value} must equal K dtype {k.dtype.value} "
            "(one cache holds both)",
        )
