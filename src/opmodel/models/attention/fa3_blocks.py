"""FA3's block sizes for a prefill on sm_90: ``tile_size_fwd_sm90`` of Dao-AILab/flash-attention's
hopper/tile_size.h (docs/models/attention.md, "Which blocks FA3 runs")."""

from __future__ import annotations

from opmodel.core.views_matmul import AttentionView

__all__ = ["fa3_blocks"]


def fa3_blocks(view: AttentionView) -> tuple[int, int]:
    """FA3's ``(kBlockM, kBlockN)`` for a prefill: ``tile_size_fwd_sm90`` of
    Dao-AILab/flash-attention's hopper/tile_size.h (two consumer warpgroups, V row-major, no
    paged KV or softcap), by the query/key head_dim ``d``, the value head_dim, the mask (a
    sliding window is FA3's ``is_local``) and the element size.

    16-bit: 192 x 128 causal, 192 x 160 local, 192 x 192 otherwise up to ``d`` 64 (64 x 64
    for values of 512, 128 x 112 for 256); 192 x 144 (128 local) up to 96; 128 x 128 causal or
    local, 128 x 176 otherwise up to 128; 128 x 128 (112 for values wider than 128, 96
    local) up to 192; 128 x 80 (64 local) above. One-byte: 192 x 160 up to 64, 192 x 128 up to
    96, 128 x 224 up to 128, 128 x 160 up to 192, 128 x 128 (64 local) above. The blocks need
    not divide each other (:mod:`.tiles` counts any pair)."""
    d, d_v, local = view.head_dim_qk, view.head_dim_v, view.window is not None
    if view.q.dtype.bits <= 8:
        return _fa3_one_byte_blocks(d, local)
    return _fa3_two_byte_blocks(d, d_v, view.causal and not local, local)


# (largest head_dim, kBlockM, kBlockN) of FA3's one-byte rows of tile_size_fwd_sm90
_FA3_ONE_BYTE = ((64, 192, 160), (96, 192, 128), (128, 128, 224), (192, 128, 160))


def _fa3_one_byte_blocks(d: int, local: bool) -> tuple[int, int]:
    for bound, block_q, block_kv in _FA3_ONE_BYTE:
        if d <= bound:
            return block_q, block_kv
    return 128, 64 if local else 128


def _fa3_two_byte_blocks(d: int, d_v: int, causal: bool, local: bool) -> tuple[int, int]:
    if d <= 64:
        wide_values = {512: (64, 64), 256: (128, 112)}
        return wide_values.get(d_v, (192, 128 if causal else 160 if local else 192))
    if d <= 96:
        return 192, 128 if local else 144
    if d <= 128:
        return 128, 128 if causal or local else 176
    if d <= 192:
        return 128, 96 if local else 128 if d_v <= 128 else 112
    return 128, 64 if local else 80
