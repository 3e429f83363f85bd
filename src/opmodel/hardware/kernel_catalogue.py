"""The GEMM kernel catalogue: which kernels a GPU architecture offers, read from package data.

One YAML file per architecture family in ``opmodel/configs/kernels`` (``sm80.yaml``,
``sm89.yaml``, ``sm90.yaml``) lists kernel families: an instruction kind, the dtypes it runs,
split-K factors, and CTA/warp tiles with their pipeline stages (and, on sm_90, producer warps
and cluster shapes). A family may say from which ``min(M, N)`` on a library dispatches it for
problems with an operand stored M- or N-major (``min_mn_if_mn_major``). A file may include
another (sm_90 runs every sm_80 kernel). Files are
validated in one pass like hardware configs: every problem is a ``file: path: problem`` line.
Each (family, tile, split-K factor) becomes one :class:`KernelTemplate`; templates are
hardware-independent and turned into ``GemmKernel`` objects by the GEMM selection
(``opmodel.models.gemm.selection``) for one GPU and dtype. The catalogue lives in the hardware
layer because it is a fact about an architecture, like the SM limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from opmodel.configs import KERNELS_DIR
from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.hardware.spec import ASYNC_INSTRUCTIONS, Instruction
from opmodel.parsing.schema import MUST_BE_NON_NEGATIVE, MUST_BE_POSITIVE, parse_dataclass
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "Instruction",
    "KernelTemplate",
    "catalogue_architectures",
    "catalogue_for",
    "load_catalogue_file",
]

_DIR = KERNELS_DIR


@dataclass(frozen=True, slots=True, kw_only=True)
class TileEntry:
    """One tile of a family: CTA tile, warp tile (M, N, K), stages, optional cluster."""

    cta: tuple[int, int, int] = field(metadata=MUST_BE_POSITIVE)
    warp: tuple[int, int, int] = field(metadata=MUST_BE_POSITIVE)
    stages: int = field(metadata=MUST_BE_POSITIVE)
    cluster: tuple[int, int] = field(default=(1, 1), metadata=MUST_BE_POSITIVE)
    registers_per_thread: int | None = field(default=None, metadata=MUST_BE_POSITIVE)


@dataclass(frozen=True, slots=True, kw_only=True)
class FamilyEntry:
    """Kernels sharing an instruction kind, dtypes and split-K factors."""

    name: str
    instruction: Instruction
    dtypes: tuple[DType, ...]
    tiles: tuple[TileEntry, ...]
    split_k: tuple[int, ...] = field(default=(1,), metadata=MUST_BE_POSITIVE)
    producer_warps: int = field(default=0, metadata=MUST_BE_NON_NEGATIVE)
    skinny_only: bool = False
    # with an M- or N-major operand, the family serves only problems whose min(M, N) is at least
    # this (0: every problem): where the library keeps another family below that size
    min_mn_if_mn_major: int = field(default=0, metadata=MUST_BE_NON_NEGATIVE)


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogueFile:
    """The top level of one catalogue file."""

    architectures: tuple[str, ...]
    families: tuple[FamilyEntry, ...]
    includes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelTemplate:
    """One catalogue kernel, before it is specialised to a GPU and dtype."""

    name: str
    instruction: Instruction
    dtypes: frozenset[DType]
    cta: tuple[int, int, int]
    warp: tuple[int, int, int]
    stages: int
    warps_per_cta: int
    producer_warps: int
    split_k: int
    cluster: tuple[int, int]
    registers_per_thread: int | None
    skinny_only: bool
    min_mn_if_mn_major: int = 0

    def runs(self, dtype: DType) -> bool:
        """True when the template's family lists ``dtype`` (or its family, e.g. ``fp8``)."""
        return dtype in self.dtypes or dtype.family in self.dtypes


def _tile_problems(family: FamilyEntry, index: int, tile: TileEntry) -> list[str]:
    path = f"families.{family.name}.tiles[{index}]"
    problems = [
        f"{path}: cta tile {tile.cta} is not a multiple of warp tile {tile.warp}"
        for c, w in zip(tile.cta, tile.warp, strict=True)
        if c % w
    ][:1]
    if tile.cluster[0] * tile.cluster[1] > 1 and family.instruction not in ASYNC_INSTRUCTIONS:
        problems.append(
            f"{path}: clusters need instruction wgmma or tcgen05 (got {family.instruction})"
        )
    return problems


def _templates(stem: str, catalogue: CatalogueFile) -> tuple[list[KernelTemplate], list[str]]:
    templates: list[KernelTemplate] = []
    problems: list[str] = []
    for family in catalogue.families:
        for index, tile in enumerate(family.tiles):
            found = _tile_problems(family, index, tile)
            problems += found
            if found:
                continue
            math_warps = math.prod(c // w for c, w in zip(tile.cta, tile.warp, strict=True))
            shape = "x".join(map(str, tile.cta))
            cluster = "" if tile.cluster == (1, 1) else f"_c{tile.cluster[0]}x{tile.cluster[1]}"
            for split in family.split_k:
                templates.append(
                    KernelTemplate(
                        name=f"{stem}_{family.name}_{shape}_{tile.stages}stage{cluster}"
                        + (f"_splitk{split}" if split > 1 else ""),
                        instruction=family.instruction,
                        dtypes=frozenset(family.dtypes),
                        cta=tile.cta,
                        warp=tile.warp,
                        stages=tile.stages,
                        warps_per_cta=math_warps + family.producer_warps,
                        producer_warps=family.producer_warps,
                        split_k=split,
                        cluster=tile.cluster,
                        registers_per_thread=tile.registers_per_thread,
                        skinny_only=family.skinny_only,
                        min_mn_if_mn_major=family.min_mn_if_mn_major,
                    )
                )
    return templates, problems


def load_catalogue_file(path: Path) -> tuple[CatalogueFile, tuple[KernelTemplate, ...]]:
    """Parse and check one catalogue file; ConfigError with every problem otherwise."""
    errors: list[str] = []
    parsed = parse_dataclass(CatalogueFile, read_yaml_mapping(path), errors)
    if parsed is None:
        raise ConfigError(f"{path}: {problem}" for problem in errors)
    assert isinstance(parsed, CatalogueFile)
    templates, problems = _templates(path.stem, parsed)
    if problems:
        raise ConfigError(f"{path}: {problem}" for problem in problems)
    return parsed, tuple(templates)


@cache
def _index(directory: Path) -> dict[str, tuple[KernelTemplate, ...]]:
    """Templates by architecture name, includes resolved, for every file in ``directory``."""
    files = {p.stem: load_catalogue_file(p) for p in sorted(directory.glob("*.yaml"))}
    index: dict[str, tuple[KernelTemplate, ...]] = {}
    for stem, (parsed, own) in files.items():
        templates = list(own)
        for included in parsed.includes:
            if included not in files:
                known = ", ".join(files)
                msg = f"{directory / stem}.yaml: includes: unknown catalogue '{included}' ({known})"
                raise ConfigError([msg])
            templates += files[included][1]
        for arch in parsed.architectures:
            if arch in index:
                msg = f"{directory / stem}.yaml: architectures: '{arch}' is in two catalogues"
                raise ConfigError([msg])
            index[arch] = tuple(templates)
    return index


def catalogue_architectures(directory: Path = _DIR) -> list[str]:
    """Architectures with a shipped kernel catalogue, sorted."""
    return sorted(_index(directory))


def catalogue_for(architecture: str, directory: Path = _DIR) -> tuple[KernelTemplate, ...] | None:
    """The templates for ``architecture`` (None when no catalogue names it)."""
    return _index(directory).get(architecture)
