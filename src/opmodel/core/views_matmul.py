"""Typed shape views of matrix-multiply ops: GEMM, batched GEMM and attention.

Conventions (CONTRACT.md): A ``[m, k]`` INPUT, B ``[k, n]`` WEIGHT, C ``[m, n]`` OUTPUT; a batched
GEMM adds a leading batch dim to A and C, and B is ``[batch, k, n]`` or broadcast ``[k, n]``;
``transpose_a`` / ``transpose_b`` store A as ``[k, m]`` and B as ``[n, k]``. Attention Q/K/V/O are
``[batch, heads, seq, head_dim]``; K and V may have fewer heads (GQA/MQA) if they divide Q's.
An attention's backward pass (a ``grad`` tensor dO, phase ``train_bwd``) reads Q, K, V, O
(inputs tagged ``q``/``k``/``v``/``o``) and dO, and writes dQ, dK, dV (outputs tagged
``q``/``k``/``v``, shaped as Q, K, V): :func:`~opmodel.core.views_attention.attention_view`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, TensorRole
from opmodel.core.viewcheck import compute_dtype, fail, one, only_roles

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = [
    "AttentionView",
    "GemmView",
    "causal_score_pairs",
    "gemm_dims",
    "gemm_operands",
    "gemm_view",
    "windowed_score_pairs",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmView:
    """``C[batch, m, n] = A[batch, m, k] @ B[(batch,) k, n]`` with its operands."""

    batch: int
    m: int
    n: int
    k: int
    a: TensorSpec
    b: TensorSpec
    c: TensorSpec
    transpose_a: bool
    transpose_b: bool
    broadcast_b: bool
    compute_dtype: DType
    # a grouped GEMM (kind grouped_gemm): each group's rows (batch 1; m, or with
    # groups_along_k k, the rows of all groups); empty for a GEMM or batched GEMM
    group_sizes: tuple[int, ...] = ()
    groups_along_k: bool = False  # the groups split the contraction (weight gradients)

    @property
    def active_groups(self) -> int:
        """Groups whose weights the op reads: those with rows (the batch otherwise)."""
        if not self.group_sizes:
            return 1 if self.broadcast_b else self.batch
        return len(self.group_sizes) - self.group_sizes.count(0)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttentionView:
    """``O = softmax(Q K^T / sqrt(d)) V`` over ``[batch, heads, seq, head_dim]`` operands, or
    its backward pass (``backward``: dQ, dK, dV from Q, K, V, O and ``grad_o`` = dO)."""

    batch: int
    heads_q: int
    heads_kv: int
    seq_q: int
    seq_kv: int
    head_dim_qk: int
    head_dim_v: int
    causal: bool
    q: TensorSpec
    k: TensorSpec
    v: TensorSpec
    o: TensorSpec
    compute_dtype: DType
    window: int | None = None
    page_size: int | None = None
    # a causal prefill's query blocks start longest first (FlashAttention-2/3) or in launch
    # order (attr cta_order: in_order)
    in_order: bool = False
    # another kernel's dirty lines in L2 (attr l2_dirty_bytes: a benchmark's flush)
    l2_dirty_bytes: int = 0
    # the backward pass: dO (a grad tensor shaped as O) read, dQ, dK, dV written
    grad_o: TensorSpec | None = None
    # V is the first head_dim_v channels of each K row, stored once (attr shared_kv: MLA's
    # absorbed form, one latent cache)
    shared_kv: bool = False
    # keys each request holds (attr kv_lengths: a decode batch at different context lengths);
    # None: every request holds seq_kv
    kv_lengths: tuple[int, ...] | None = None
    # query tokens each request holds (attr q_lengths: a packed prefill); needs kv_lengths
    q_lengths: tuple[int, ...] | None = None
    # the kernel family the user named (attr attention_kernel); None: by the architecture
    kernel_choice: str | None = None

    @property
    def backward(self) -> bool:
        """True for the attention's backward pass (a ``grad`` tensor dO)."""
        return self.grad_o is not None

    @property
    def kv_nbytes(self) -> int:
        """Bytes the keys and values occupy: K's and V's, or K's alone when V is a prefix of
        each key row (``shared_kv``)."""
        return self.k.nbytes if self.shared_kv else self.k.nbytes + self.v.nbytes

    @property
    def score_pairs(self) -> int:
        """Valid (query, key) pairs per (batch, head): the softmax elements actually computed
        (of a request holding ``seq_kv`` keys; :attr:`batch_score_pairs` sums the batch)."""
        return self.pairs_for(self.seq_kv)

    @property
    def batch_score_pairs(self) -> int:
        """Valid (query, key) pairs per head, summed over the batch's requests (each at its own
        lengths with ``kv_lengths`` and ``q_lengths``)."""
        if self.kv_lengths is None:
            return self.batch * self.score_pairs
        queries = self.q_lengths or (self.seq_q,) * self.batch
        if not self.causal:
            return sum(q * k for q, k in zip(queries, self.kv_lengths, strict=True))
        if self.window is None and self.q_lengths is None:  # causal_score_pairs summed
            sq, batch = self.seq_q, self.batch
            return sq * sum(self.kv_lengths) - batch * sq * sq + batch * sq * (sq + 1) // 2
        return sum(self.pairs_for(k, q) for q, k in zip(queries, self.kv_lengths, strict=True))

    @property
    def kv_tokens(self) -> int:
        """Keys held by the batch's requests, summed: ``batch x seq_kv`` or ``sum(kv_lengths)``."""
        return self.batch * self.seq_kv if self.kv_lengths is None else sum(self.kv_lengths)

    @property
    def q_tokens(self) -> int:
        """Query tokens of the batch's requests: ``batch x seq_q`` or ``sum(q_lengths)``."""
        return self.batch * self.seq_q if self.q_lengths is None else sum(self.q_lengths)

    def q_share(self, nbytes: int) -> int:
        """The bytes of a Q-shaped tensor (Q, O, dO, dQ) that the requests' queries fill."""
        return (
            nbytes
            if self.q_lengths is None
            else nbytes * self.q_tokens // (self.batch * self.seq_q)
        )

    def kv_share(self, nbytes: int) -> int:
        """The bytes of a K-shaped tensor (K, V, dK, dV) that the requests' keys fill."""
        return (
            nbytes
            if self.kv_lengths is None
            else nbytes * self.kv_tokens // (self.batch * self.seq_kv)
        )

    def request_lengths(self) -> tuple[tuple[int, int], ...] | None:
        """(query tokens, keys) of each request when they differ from the tensors' seq dims
        (attrs ``q_lengths``, ``kv_lengths``); ``None`` when every request fills them."""
        if self.kv_lengths is None:
            return None
        queries = self.q_lengths or (self.seq_q,) * self.batch
        return tuple(zip(queries, self.kv_lengths, strict=True))

    def pairs_for(self, keys: int, queries: int | None = None) -> int:
        """Valid (query, key) pairs per head of one request holding ``keys`` keys and
        ``queries`` query tokens (default ``seq_q``)."""
        sq = self.seq_q if queries is None else queries
        if not self.causal:
            return sq * keys
        if self.window is not None:
            return windowed_score_pairs(sq, keys, self.window)
        return causal_score_pairs(sq, keys)


def causal_score_pairs(seq_q: int, seq_kv: int) -> int:
    """Unmasked pairs of a bottom-right-aligned causal mask, in closed form.

    Query row ``i`` (0-based) sees keys ``j <= i + (seq_kv - seq_q)``, i.e.
    ``c_i = i + seq_kv - seq_q + 1`` keys for ``seq_q <= seq_kv``. Summing over rows:
    ``seq_q * (seq_kv - seq_q) + seq_q * (seq_q + 1) / 2`` (FlashAttention-2's convention for
    ``seq_q != seq_kv``, Dao 2023, README "causal" note).
    """
    return seq_q * (seq_kv - seq_q) + seq_q * (seq_q + 1) // 2


def windowed_score_pairs(seq_q: int, seq_kv: int, window: int) -> int:
    """Unmasked pairs of a causal mask with a sliding window, in closed form.

    Row ``i`` sees keys ``i + off - window < j <= i + off`` (``off = seq_kv - seq_q``), i.e.
    ``min(window, c_i)`` keys with ``c_i = i + off + 1`` running from ``lo = off + 1`` to
    ``hi = off + seq_q`` (Mistral-style sliding-window attention, Jiang et al. 2023). The sum of
    ``min(window, c)`` over that range is an arithmetic series up to ``window`` and a constant
    beyond it.
    """
    lo, hi = seq_kv - seq_q + 1, seq_kv
    if window >= hi:
        return (lo + hi) * seq_q // 2
    if window <= lo:
        return window * seq_q
    return (lo + window - 1) * (window - lo) // 2 + window * (hi - window + 1)


def _check_gemm_ranks(op: LocalOp, a: TensorSpec, b: TensorSpec, c: TensorSpec) -> None:
    batched = op.kind is OpKind.BATCHED_GEMM
    rank = 3 if batched else 2
    form = "[batch, m, k]" if batched else "[m, k]"
    for name, tensor, want in (
        ("A", a, (rank,)),
        ("B", b, (2, 3) if batched else (2,)),
        ("C", c, (rank,)),
    ):
        if len(tensor.shape) not in want:
            dims = " or ".join(str(w) for w in want)
            raise fail(
                op, f"{name} must have {dims} dims (A {form}); got shape {list(tensor.shape)}"
            )


def _check_batch_and_c(
    op: LocalOp, a: TensorSpec, b: TensorSpec, c: TensorSpec, mn: tuple[int, int]
) -> bool:
    """Check a batched GEMM's B batch against A's and C's shape against ``[batch,] m, n``;
    returns whether one 2-D B is broadcast over the batch."""
    batched = op.kind is OpKind.BATCHED_GEMM
    batch = a.shape[0] if batched else 1
    broadcast_b = batched and len(b.shape) == 2
    if batched and not broadcast_b and b.shape[0] != batch:
        raise fail(op, f"B batch {b.shape[0]} differs from A batch {batch}")
    want_c = (batch, *mn) if batched else mn
    if c.shape != want_c:
        raise fail(
            op,
            f"C must be {list(want_c)} for A {list(a.shape)} and B {list(b.shape)}; "
            f"got {list(c.shape)}",
        )
    return broadcast_b


def gemm_operands(op: LocalOp) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
    """A (the input), B (the weight) and C (the output) of a GEMM kind, one of each."""
    only_roles(op, (TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    return (
        one(op, TensorRole.INPUT, "A"),
        one(op, TensorRole.WEIGHT, "B"),
        one(op, TensorRole.OUTPUT, "C"),
    )


def gemm_dims(op: LocalOp, a: TensorSpec, b: TensorSpec) -> tuple[int, int, int, bool, bool]:
    """``(m, n, k, transpose_a, transpose_b)`` from A's and B's last two dims; an error when
    their inner dimensions differ."""
    ta = op.attrs.get("transpose_a", False) is True
    tb = op.attrs.get("transpose_b", False) is True
    m, k = (a.shape[-1], a.shape[-2]) if ta else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if tb else (b.shape[-2], b.shape[-1])
    if k != kb:
        raise fail(
            op,
            f"inner dimensions differ: A has k={k} but B has k={kb} "
            f"(A {list(a.shape)}, B {list(b.shape)}, transpose_a={ta}, transpose_b={tb})",
        )
    return m, n, k, ta, tb


def gemm_view(op: LocalOp) -> GemmView:
    """Parse and check a GEMM or batched GEMM; raise OpValidationError naming the problem."""
    a, b, c = gemm_operands(op)
    _check_gemm_ranks(op, a, b, c)
    m, n, k, ta, tb = gemm_dims(op, a, b)
    broadcast_b = _check_batch_and_c(op, a, b, c, (m, n))
    return GemmView(
        batch=a.shape[0] if op.kind is OpKind.BATCHED_GEMM else 1,
        m=m,
        n=n,
        k=k,
        a=a,
        b=b,
        c=c,
        transpose_a=ta,
        transpose_b=tb,
        broadcast_b=broadcast_b,
        compute_dtype=compute_dtype(op, a.dtype),
    )
