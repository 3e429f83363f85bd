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
Other architectures have no count (``None``).

A shape the script cannot count (FA2 compiles sm_8x's causal 64 x 64 blocks only in causal
variants; the script reads each shape's plain one) gets :func:`estimated_loop_count`: its
``HMMA`` and ``ldmatrix`` bytes from the shape (the formulas every counted loop satisfies), its
other instructions from the plane through the architecture's counted loops,

    other = a r Bc + b Bc d + c r d + e        (r = block_q / warps query rows per warp)

(the softmax's work per score, the K and V fragment loads and address updates per key and
dimension, the Q fragments and output rescale per row and dimension, the loop's fixed part),
fitted by least squares on the counted shapes (SASS counts, not timings): within 3.4 % of
every counted sm_80 and sm_86 loop and 5.6 % of sm_90's.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from opmodel.configs import INSTRUCTIONS_DIR
from opmodel.core.errors import ConfigError
from opmodel.core.linalg import least_squares
from opmodel.models.attention.launch_blocks import fa2_head_dim
from opmodel.models.shared.sass_code import sass_architecture
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "FLASH_COUNTS_FILE",
    "LoopCount",
    "estimated_loop_count",
    "flash_loop_count",
    "load_flash_counts",
    "loop_count",
]

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


@lru_cache(maxsize=1024)  # a predict asks once per tile shape; a sweep repeats its shapes
def loop_count(
    architecture: str | None, head_dim: int, block_q: int, block_kv: int, warps: int
) -> LoopCount | None:
    """The loop of the FA2 kernel that runs ``head_dim`` (:func:`fa2_head_dim`, the head dim
    FA2 compiles): its count, or where its shape has none :func:`estimated_loop_count`;
    ``None`` above head_dim 256 or without counts for the architecture."""
    compiled = fa2_head_dim(head_dim)
    if compiled is None:
        return None
    shape = (architecture, compiled, block_q, block_kv)
    return flash_loop_count(*shape) or estimated_loop_count(*shape, warps)


def estimated_loop_count(
    architecture: str | None, head_dim: int, block_q: int, block_kv: int, warps: int
) -> LoopCount | None:
    """:func:`flash_loop_count` of a shape without a count (module docstring): ``HMMA`` and
    ``ldmatrix`` bytes from the shape, the other instructions from the plane through the
    architecture's counted loops; ``None`` without counts for the architecture."""
    arch = sass_architecture(architecture)
    plane = None if arch is None else _planes().get(arch)
    if plane is None or warps <= 0 or block_q % warps:
        return None
    rows = block_q // warps
    mma = rows // 16 * (block_kv // 8 * head_dim // 16 + head_dim // 8 * block_kv // 16)
    features = _features(rows, block_kv, head_dim)
    other = max(1, round(sum(w * f for w, f in zip(plane, features, strict=True))))
    return warps, mma, other, 2 * (2 * block_kv * head_dim + rows * head_dim)


def _features(rows: int, block_kv: int, head_dim: int) -> tuple[float, float, float, float]:
    return (rows * block_kv, block_kv * head_dim, rows * head_dim, 1.0)


@cache
def _planes() -> dict[str, tuple[float, ...]]:
    """Per architecture, the least-squares plane of the other instructions over the counted
    loops' features (:func:`opmodel.core.linalg.least_squares`); architectures with fewer
    counted loops than features have none."""
    by_arch: dict[str, list[tuple[tuple[float, ...], float]]] = {}
    for (arch, head, block_q, block_kv), (warps, _, other, _) in _shipped().items():
        by_arch.setdefault(arch, []).append(
            (_features(block_q // warps, block_kv, head), float(other))
        )
    planes = {}
    for arch, rows in by_arch.items():
        solved = _least_squares(rows)
        if solved is not None:
            planes[arch] = solved
    return planes


def _least_squares(rows: list[tuple[tuple[float, ...], float]]) -> tuple[float, ...] | None:
    """Least-squares weights of ``y ~ x . w`` over ``(x, y)`` rows (columns scaled to unit size
    for the solve), or ``None`` when the rows do not determine them."""
    n = len(rows[0][0])
    if len(rows) < n:
        return None
    scale = [max(abs(x[j]) for x, _ in rows) or 1.0 for j in range(n)]
    scaled = [[x[j] / scale[j] for j in range(n)] for x, _ in rows]
    try:
        weights = least_squares(scaled, [y for _, y in rows])
    except ValueError:
        return None
    return tuple(w / s for w, s in zip(weights, scale, strict=True))
