"""Block sizes ``(Br, Bc)`` of FlashAttention's kernels, from the libraries' launch templates:
FA2's forward (:mod:`.kernels`) and both libraries' backward passes (:mod:`.backward`); FA3's
forward is :mod:`.fa3_blocks`.

Both libraries dispatch on the head dimension rounded up to the next size they compile
(32, 64, 96, 128, 192, 256; PyTorch 2.14.1's wheel holds FA2 kernels of these, the head dims
of configs/instructions/flash_fwd.yaml) and FA2 on the shared memory of the
GPU (``cudaDevAttrMaxSharedMemoryPerBlockOptin``, a config's
``max_shared_memory_per_cta_bytes``; ``cudaDevAttrMaxSharedMemoryPerMultiprocessor``, its
``shared_memory_per_sm_bytes``) and on ``is_sm8x`` (compute capability 8.x above 8.0: sm_86,
sm_89).

* FA2's forward (``run_mha_fwd_hdim*`` of Dao-AILab/flash-attention's
  csrc/flash_attn/src/flash_fwd_launch_template.h, commit 01afd16d, the same in PyTorch's
  copy, aten/src/ATen/native/transformers/cuda/flash_attn/flash_fwd_launch_template.h, commit
  04ff5beb; no dropout): 128 x 128 up to head_dim 64; up to 96, 128 x 64 (64 x 64 causal on
  sm_8x); up to 128, 128 x 64 (on sm_8x 128 x 32, 64 x 64 causal); up to 192, 128 x 64 of 8
  warps; up to 256, 128 x 64 of 8 warps where a block may take 128 KiB and an SM holds less
  than 192 KiB (the A100), 64 x 64 otherwise (the H100's two CTAs per SM, sm_8x's 99 KiB).
  "Causal" is FA2's ``is_causal``: a causal mask without a sliding window.
* FA3's backward on sm_90 (``run_mha_bwd_hdim*`` of hopper/flash_bwd_launch_template.h,
  ``Arch >= 90``; the same in the two stored versions, commits fc8e93cb and 000786d2): 128 x
  128 up to head_dim 64, 64 x 128 up to 96, 80 x 128 up to 128 without a mask (64 x 128 causal
  or local), 64 x 96 up to 192, 64 x 80 above.
* FA2's backward (``run_mha_bwd_hdim*`` of csrc/flash_attn/src/flash_bwd_launch_template.h,
  commit 073afd59): 128 x 128 up to head_dim 32; up to 64, 128 x 128 where a block may take
  144 KiB of shared memory and 64 x 128 below; 64 x 128 up to 96; up to 128, 64 x 128 from
  144 KiB and 64 x 64 below; 64 x 64 up to 192; 64 x 64 up to 256 from 144 KiB and 64 x 32
  below (sm_86 and sm_89, whose blocks get 99 KiB).
* Other backward kernels (sm_90 under PyTorch's default, sm_100's ``tcgen05``; an
  approximation until those kernels are described): 128 x 128 up to head_dim 64, 64 x 128 up
  to 128, 64 x 64 above.
"""

from __future__ import annotations

__all__ = [
    "FA2_HEAD_DIMS",
    "default_backward_blocks",
    "fa2_backward_blocks",
    "fa2_forward_blocks",
    "fa2_head_dim",
    "fa3_backward_blocks",
    "is_sm8x",
]

FA2_HEAD_DIMS = (32, 64, 96, 128, 192, 256)  # FA2's compiled head dims (module docstring)

_FA2_LARGE_SMEM_BYTES = 144 * 1024  # FA2's backward: max_smem_per_block for its larger blocks
# FA2's forward at head_dim 256: 128 x 64 where a block may take 2 x 256 x (128 + 2 x 64)
# bytes and an SM holds less than 4 x 256 x (64 + 2 x 64) (two 64 x 64 CTAs)
_FA2_FWD_256_BLOCK_BYTES = 2 * 256 * (128 + 2 * 64)
_FA2_FWD_256_SM_BYTES = 4 * 256 * (64 + 2 * 64)


def fa2_head_dim(head_dim: int) -> int | None:
    """The head dim of the FA2 kernel that runs ``head_dim`` (the next one FA2 compiles; the
    rest of the head is padding), or ``None`` above 256."""
    for compiled in FA2_HEAD_DIMS:
        if compiled >= head_dim:
            return compiled
    return None


def is_sm8x(architecture: str | None) -> bool:
    """FA2's ``is_sm8x``: compute capability 8.x above 8.0 (sm_86, sm_87, sm_89)."""
    arch = architecture or ""
    return len(arch) == 4 and arch.startswith("sm8") and arch != "sm80"


def fa2_forward_blocks(
    head_dim: int, causal: bool, sm8x: bool, smem_per_block_bytes: int, smem_per_sm_bytes: int
) -> tuple[int, int, int]:
    """FA2's forward ``(kBlockM, kBlockN, warps)`` for ``head_dim`` (module docstring):
    ``causal`` is FA2's ``is_causal`` (no sliding window), ``sm8x`` :func:`is_sm8x`, and the
    shared memory a block may opt in to and an SM holds."""
    if head_dim <= 64:
        return 128, 128, 4
    if head_dim <= 128:
        if sm8x and causal:
            return 64, 64, 4
        return (128, 32, 4) if sm8x and head_dim > 96 else (128, 64, 4)
    if head_dim <= 192:
        return 128, 64, 8
    wide = (
        smem_per_block_bytes >= _FA2_FWD_256_BLOCK_BYTES
        and smem_per_sm_bytes < _FA2_FWD_256_SM_BYTES
    )
    return (128, 64, 8) if wide else (64, 64, 4)


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
