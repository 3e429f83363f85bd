"""Count the instructions of FlashAttention-2's forward main loop per warp, from SASS.

Usage:
    python scripts/count_flash_sass.py --library torch/lib/libtorch_cuda.so \\
        [--arch sm_90 ...] [--workdir DIR] [--write FILE]

PyTorch carries FlashAttention-2's forward kernel (``pytorch_flash::flash_fwd_kernel``, the
kernel of its built-in flash SDPA backend) compiled for each architecture and each block shape
its launch templates pick (``Flash_fwd_kernel_traits<head_dim, block_q, block_kv, warps>``).
For each shape the script disassembles the plain variant (no dropout, mask, window, ALiBi or
soft cap; head dimension a whole number of tiles; sequence lengths whole blocks where the
shape is compiled so, as FA2 compiles it for head dimensions up to 128) and counts, over its
main loop (the code between the outermost backward branch and its target: one key block per
iteration), the warp's ``HMMA`` instructions, every other instruction (the softmax's
arithmetic, the shared-memory loads, address updates and barriers the warp issues between its
two matrix products) and, among those, its ``LDSM`` (``ldmatrix``) loads of Q, K and V
fragments from shared memory, 512 bytes each for the ``.4`` form, 256 for ``.2``, 128 for
``.1``, counted as bytes. Needs ``cuobjdump`` and ``nvdisasm`` (see count_aten_sass.py), no GPU.
``--write`` writes the YAML file the project ships as
``src/opmodel/configs/instructions/flash_fwd.yaml``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

import sass_listing as sass
from sass_listing import Instruction, parse

_TRAITS = re.compile(r"Flash_fwd_kernel_traits<(\d+), (\d+), (\d+), (\d+), (?:true|false), ")
# flash_fwd_kernel's flags after the traits: dropout, causal, local, alibi, even MN, even K,
# soft cap, return softmax
_PLAIN = ("false", "false", "false", "false", None, "true", "false", "false")

Shape = tuple[int, int, int, int]  # head_dim, block_q, block_kv, warps


def main_loop(code: Sequence[Instruction]) -> list[Instruction]:
    """The instructions of the outermost loop: from the lowest backward-branch target to the
    highest backward branch."""
    ranges = []
    for ins in code:
        match = sass.BRANCH.match(ins.text)
        if match and int(match.group(2), 16) < ins.address:
            ranges.append((int(match.group(2), 16), ins.address))
    if not ranges:
        raise ValueError("no loop")
    low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
    return [ins for ins in code if low <= ins.address <= high]


def _flags(plain: str) -> tuple[str, ...]:
    return tuple(re.findall(r"true|false", plain[plain.index("kernel_traits<") :]))[2:10]


def _plain_rank(flags: tuple[str, ...]) -> int | None:
    """0 for the plain variant with even sequence blocks, 1 without, None for any other."""
    if len(flags) < 8 or any(w is not None and f != w for f, w in zip(flags, _PLAIN, strict=True)):
        return None
    return 0 if flags[4] == "true" else 1


def ldsm_bytes(loop: Sequence[Instruction]) -> int:
    """Bytes a warp's ``LDSM`` instructions in ``loop`` read from shared memory: 8 x 8 16-bit
    matrices of 128 bytes, four for ``.4``, two for ``.2``, one for ``.1``."""
    total = 0
    for ins in loop:
        if ins.opcode.startswith("LDSM"):
            matrices = ins.opcode.rsplit(".", 1)[-1]
            total += 128 * (int(matrices) if matrices.isdigit() else 1)
    return total


def count(library: Path, arch: str, tool: str, workdir: Path) -> dict[Shape, tuple[int, int, int]]:
    """(HMMA, other instructions, LDSM bytes) per warp and main-loop iteration, by block shape
    (bf16)."""
    best: dict[Shape, tuple[int, tuple[int, int, int]]] = {}
    for cubin in sass.arch_cubins(library, arch, tool, workdir):
        if b"flash_fwd_kernel" not in cubin.read_bytes():
            continue
        listings = sass.functions(sass.cuobjdump(tool, ["-sass", str(cubin)]))
        names = list(listings)
        for name, plain in zip(names, sass.demangle(names), strict=True):
            traits = _TRAITS.search(plain)
            if "flash_fwd_kernel<" not in plain or "splitkv" in plain or traits is None:
                continue
            rank = _plain_rank(_flags(plain))
            if rank is None or "bfloat16" not in plain:
                continue
            shape = (int(traits[1]), int(traits[2]), int(traits[3]), int(traits[4]))
            loop = main_loop(parse(listings[name]))
            mma = sum(1 for ins in loop if ins.opcode.startswith("HMMA"))
            if shape not in best or rank < best[shape][0]:
                best[shape] = (rank, (mma, len(loop) - mma, ldsm_bytes(loop)))
    return {shape: value for shape, (_, value) in sorted(best.items())}


def _write(path: Path, counts: dict[str, dict[Shape, tuple[int, int, int]]], library: Path) -> None:
    lines = [
        "# FlashAttention-2's forward main loop, per warp and key block: its HMMA (m16n8k16)",
        "# instructions, every other instruction it issues and the bytes its LDSM",
        "# (ldmatrix) instructions read from shared memory, counted from SASS, not fitted",
        f"# ({library.name}'s pytorch_flash::flash_fwd_kernel, bf16, plain variant).",
        "# Written by `python scripts/count_flash_sass.py --write FILE` (see its docstring);",
        "# read by opmodel.models.attention.counted. sm_89 runs the sm_86 code.",
        "source: PyTorch 2.14.1 (torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl),"
        " torch/lib/libtorch_cuda.so, disassembled with cuobjdump and nvdisasm 13.5.37",
        "loops:",
    ]
    for arch, shapes in counts.items():
        lines.append(f"  {arch.replace('_', '')}:")
        for (head, rows, keys, warps), (mma, other, ldsm) in shapes.items():
            lines.append(
                f"    - {{head_dim: {head}, block_q: {rows}, block_kv: {keys}, warps: {warps},"
                f" mma: {mma}, other: {other}, ldsm_bytes: {ldsm}}}"
            )
    path.write_text("\n".join(lines) + "\n")


def _report(counts: dict[str, dict[Shape, tuple[int, int, int]]]) -> list[str]:
    return [
        f"{arch:6s} {'x'.join(map(str, shape)):14s} HMMA {mma:4d} other {other:5d} LDSM {ldsm:6d} B"
        for arch, shapes in counts.items()
        for shape, (mma, other, ldsm) in shapes.items()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    return sass.run(__doc__.split("\n")[0], argv, count, _report, _write)


if __name__ == "__main__":
    sys.exit(main())
