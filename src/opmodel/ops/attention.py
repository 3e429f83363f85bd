"""Constructors of the attention ops: Q, K, V inputs and O output, ``[batch, heads, seq,
head_dim]``, tagged ``q``/``k``/``v``/``o`` (README, "Conventions of the op kinds").

Grouped-query and multi-query attention take ``kv_heads`` (dividing ``heads``); a value head
size other than the query-key one takes ``head_dim_v`` (DeepSeek's MLA decode:
``head_dim=576, head_dim_v=512, kv_heads=1, shared_kv=True``). Extra keyword arguments are
op attrs (``causal`` and ``shared_kv`` are named here; ``kv_lengths``, ``page_size``,
``window``, ``attention_kernel``, ... pass through). The backward pass of a prefill is
``opmodel.backward_of(op)``.
"""

from __future__ import annotations

from opmodel.core.attrs import AttrValue
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp
from opmodel.ops._common import assemble, dtype_of, positive, tensor

__all__ = ["attention_decode", "attention_prefill"]


def _attention(
    kind: OpKind,
    sizes: dict[str, object],
    options: dict[str, AttrValue | None],
    naming: tuple[str | None, Phase | str],
    attrs: dict[str, AttrValue],
) -> LocalOp:
    """The op of ``kind`` from ``sizes``: dtype, batch, heads, kv_heads, seq_q, seq_kv,
    head_dim and head_dim_v (kv_heads, seq_kv and head_dim_v None: heads', seq_q's and
    head_dim's)."""
    where = f"ops.{kind.value}"
    d = dtype_of(where, "dtype", sizes.pop("dtype"))
    optional = ("kv_heads", "seq_kv", "head_dim_v")
    n = {
        key: positive(where, key, value)
        for key, value in sizes.items()
        if value is not None or key not in optional
    }
    b, hq, hkv = n["batch"], n["heads"], n.get("kv_heads", n["heads"])
    sq, skv = n["seq_q"], n.get("seq_kv", n["seq_q"])
    dqk = n["head_dim"]
    dv = n.get("head_dim_v", dqk)
    tensors = (
        tensor(TensorRole.INPUT, (b, hq, sq, dqk), d, "q"),
        tensor(TensorRole.INPUT, (b, hkv, skv, dqk), d, "k"),
        tensor(TensorRole.INPUT, (b, hkv, skv, dv), d, "v"),
        tensor(TensorRole.OUTPUT, (b, hq, sq, dv), d, "o"),
    )
    return assemble(kind, naming, tensors, options, attrs)


def attention_prefill(
    batch: int,
    heads: int,
    seq: int,
    head_dim: int,
    dtype: DType | str = DType.BF16,
    *,
    kv_heads: int | None = None,
    seq_kv: int | None = None,
    head_dim_v: int | None = None,
    causal: bool = False,
    name: str | None = None,
    phase: Phase | str = Phase.PREFILL,
    **attrs: AttrValue,
) -> LocalOp:
    """Attention over ``seq`` query tokens and ``seq_kv`` keys (default ``seq``; more with a
    cached prefix: a chunked prefill, bottom-right aligned under ``causal``)."""
    sizes: dict[str, object] = {
        "dtype": dtype,
        "batch": batch,
        "heads": heads,
        "kv_heads": kv_heads,
        "seq_q": seq,
        "seq_kv": seq_kv,
        "head_dim": head_dim,
        "head_dim_v": head_dim_v,
    }
    options: dict[str, AttrValue | None] = {"causal": causal}
    return _attention(OpKind.ATTENTION_PREFILL, sizes, options, (name, phase), attrs)


def attention_decode(
    batch: int,
    heads: int,
    kv_len: int,
    head_dim: int,
    dtype: DType | str = DType.BF16,
    *,
    kv_heads: int | None = None,
    seq_q: int = 1,
    head_dim_v: int | None = None,
    shared_kv: bool = False,
    causal: bool = False,
    name: str | None = None,
    phase: Phase | str = Phase.DECODE,
    **attrs: AttrValue,
) -> LocalOp:
    """``seq_q`` new query tokens per request (1, or a few when speculating) against a KV
    cache of ``kv_len`` keys (its capacity per request with attr ``kv_lengths``)."""
    sizes: dict[str, object] = {
        "dtype": dtype,
        "batch": batch,
        "heads": heads,
        "kv_heads": kv_heads,
        "seq_q": seq_q,
        "seq_kv": kv_len,
        "head_dim": head_dim,
        "head_dim_v": head_dim_v,
    }
    options: dict[str, AttrValue | None] = {"causal": causal, "shared_kv": shared_kv}
    return _attention(OpKind.ATTENTION_DECODE, sizes, options, (name, phase), attrs)
