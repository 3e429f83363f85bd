"""Block sizes ``(Br, Bc)`` of FlashAttention's backward kernels (:mod:`.backward`).

Both libraries dispatch on the head dimension rounded up to the next size they compile
(32, 64, 96, 128, 160, 192, 256) and, for FA2, on the shared memory one block may opt in to
(``cudaDevAttrMaxSharedMemoryPerBlockOptin``, a config's ``max_shared_memory_per_cta_bytes``).

* FA3 on sm_90 (``run_mha_bwd_hdim*`` of Dao-AILab/flash-attention's
  hopper/flash_bwd_launch_template.h, ``Arch >= 90``; the same in the two stored versions,
  commits fc8e93cb and 000786d2): 128 x 128 up to head_dim 64, 64 x 128 up to 96, 80 x 128 up
  to 128 without a mask (64 x 128 causal or local), 64 x 96 up to 192, 64 x 80 above.
* FA2 (``run_mha_bwd_hdim*`` of csrc/flash_attn/src/flash_bwd_launch_template.h, commit
  073afd59): 128 x 128 up to head_dim 32; up to 64, 128 x 128 where a block may take 144 KiB
  of shared memory and 64 x 128 below; 64 x 128 up to 96; up to 128, 64 x 128 from 144 KiB
  and 64 x 64 below; 64 x 64 up to 192; 64 x 64 up to 256 from 144 KiB and 64 x 32 below
  (sm_86 and sm_89, whose blocks get 99 KiB).
* Elsewhere (sm_90 under PyTorch's default, sm_100's ``tcgen05``; an approximation until those
  kernels are described): 128 x 128 up to head_dim 64, 64 x 128 up to 128, 64 x 64 above.
"""

from __future__ import annotations

__all__ = ["default_backward_blocks", "fa2_backward_blocks", "fa3_backward_blocks"]

_FA2_LARGE_SMEM_BYTES = 144 * 1024  # FA2's max_smem_per_block threshold for its larger blocks


def fa3_backward_blocks(head_dim: int, masked: bool) -> tuple[int, int]:
    """FA3's ``(kBlockM, kBlockN)`` on sm_90 for ``head_dim`` (the larger of the query/key and
    value head dims); ``masked``: a causal or sliding-window mask (module docstring)."""
    if head_dim <= 64:
        return 128, 128
    if head_dim <= 96:
        return 64, 128
    if head_dim <= 128:
        return (64, 128) if masked else (80, 128)
    return (64, 96) if head_dim <= 192 else (64, 80)


def fa2_backward_blocks(head_dim: int, max_smem_per_block_bytes: int) -> tuple[int, int]:
    """FA2's ``(kBlockM, kBlockN)`` for ``head_dim`` on a GPU whose blocks may opt in to
    ``max_smem_per_block_bytes`` of shared memory (module docstring)."""
    large = max_smem_per_block_bytes >= _FA2_LARGE_SMEM_BYTES
    if head_dim <= 32:
        return 128, 128
    if head_dim <= 64:
        return (128, 128) if large else (64, 128)
    if head_dim <= 96:
        return 64, 128
    if head_dim <= 128:
        return (64, 128) if large else (64, 64)
    if head_dim <= 192:
        return 64, 64
    return (64, 64) if large else (64, 32)


def default_backward_blocks(head_dim: int) -> tuple[int, int]:
    """The blocks of a backward kernel this package does not describe block by block (module
    docstring)."""
    if head_dim <= 64:
        return 128, 128
    return (64, 128) if head_dim <= 128 else (64, 64)
