"""FlashAttention-2's forward main loop, counted from its SASS: instructions per warp per key block.

``configs/instructions/flash_fwd.yaml`` holds, per architecture and block shape (head dimension,
``block_q``, ``block_kv``, warps per CTA), the ``HMMA`` instructions, every other instruction
and the bytes of its ``ldmatrix`` loads from shared memory of one warp of ``flash_fwd_kernel``
per iteration of its main loop, one key block (``scripts/count_flash_sass.py`` walks the
disassembled kernels of a PyTorch wheel; no GPU and no fit). The other instructions (the
softmax's arithmetic, the shared-memory fragment loads, address updates, barriers) take the
warp's scheduler between its two matrix products, and the fragment loads share the SM's
shared-memory bandwidth during them: :func:`~opmodel.models.attention.costs.tile_cycles`
charges both where a count exists. sm_89 runs the sm_86 code (the wheels carry no sm_89 SASS).
Other architectures and shapes have no count (``None``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from opmodel.configs import INSTRUCTIONS_DIR
from opmodel.core.errors import ConfigError
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = ["FLASH_COUNTS_FILE", "LoopCount", "flash_loop_count", "load_flash_counts"]

FLASH_COUNTS_FILE = INSTRUCTIONS_DIR / "flash_fwd.yaml"
_FIELDS = ("head_dim", "block_q", "block_kv", "warps", "mma", "other", "ldsm_bytes")

# warps per CTA; HMMA and other instructions and ldmatrix bytes per warp and key block
LoopCount = tuple[int, int, int, int]
Counts = dict[tuple[str, int, int, int], LoopCount]


def _entry(raw: Any, where: str) -> tuple[tuple[int, int, int], LoopCount]:
    ok = isinstance(raw, dict) and set(raw) == set(_FIELDS)
    values = [raw.get(f) for f in _FIELDS] if ok else []
    if not ok or any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in values):
        raise ConfigError([f"{where}: needs positive integers {', '.join(_FIELDS)} (got {raw!r})"])
    head, rows, keys, warps, mma, other, ldsm = values
    return (head, rows, keys), (warps, mma, other, ldsm)


def load_flash_counts(path: Path) -> Counts:
    """Read and validate a counts file (module docstring); errors name the file and field."""
    data = read_yaml_mapping(path)
    loops = data.get("loops")
    if not isinstance(data.get("source"), str) or not isinstance(loops, dict):
        raise ConfigError([f"{path}: needs the fields source (a string), loops (a mapping)"])
    counts: Counts = {}
    for arch, entries in loops.items():
        if not isinstance(entries, list):
            raise ConfigError([f"{path}: loops.{arch}: must be a list of block shapes"])
        for i, raw in enumerate(entries):
            shape, value = _entry(raw, f"{path}: loops.{arch}[{i}]")
            counts[(str(arch), *shape)] = value
    return counts


@cache
def _shipped() -> Counts:
    return load_flash_counts(FLASH_COUNTS_FILE)


def flash_loop_count(
    architecture: str | None, head_dim: int, block_q: int, block_kv: int
) -> LoopCount | None:
    """(warps per CTA, HMMA and other instructions and ldmatrix bytes per warp and key block) of
    FA2's forward kernel of this block shape on a GPU of ``architecture``, or ``None`` without
    a count."""
    arch = sass_architecture(architecture)
    return None if arch is None else _shipped().get((arch, head_dim, block_q, block_kv))
