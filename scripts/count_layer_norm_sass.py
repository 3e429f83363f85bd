"""Count what ATen's layer norm kernel issues per element and per row, from its SASS.

Usage:
    python scripts/count_layer_norm_sass.py --library torch/lib/libtorch_cuda.so \
        [--arch sm_90 ...] [--cuobjdump cuobjdump] [--workdir DIR] [--write FILE]

Tools and inputs as ``scripts/count_aten_sass.py`` (no GPU). The kernel is
``vectorized_layer_norm_kernel<T, float, rms_norm>`` (PyTorch 2.11 and later; ``false`` for
the layer norm, ``true`` for the RMS norm, both counted): one row per 128-thread CTA, a loop
over the row in vectors of 4 elements for its statistics (a Welford update, or a sum of
squares), a shuffle and shared-memory reduction of them, then a loop that normalises the row
again in vectors of 4 and stores it (the variant with both weight and bias, or the weight).
The script walks the path one thread of warp 0 runs:

- a conditional forward branch over at most 5 instructions that hold a ``CALL`` jumps over a
  library function's slow path (the reciprocal's special cases) and is taken;
- a branch on two predicates (``@P0 BRA P1, ...``) picks the variant with weight and bias and is
  taken; of an if/else the longer arm is run (the reduction across the CTA's four warps, not
  the one-warp case);
- a loop that loads or stores global memory is a per-element loop, walked once here and counted
  apart; any other loop (the reduction across warps) runs ``log2(4)`` times.

Per element: each pass's main loop (the one handling the most elements per iteration: 4 per
vector load of the input in the Welford loop, 4 per vector store in the normalise loop), its
instructions over its elements. Its issue cycles per element take the busiest of the SMSP's
issue slot and pipes (``PIPE_RATE``). Per row: the instructions of the walked path outside the
per-element loops (prologue, reductions, epilogue). ``--write`` writes the YAML file the project
ships as ``src/opmodel/configs/instructions/aten_layer_norm.yaml``.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from sass_listing import (
    BRANCH,
    DTYPES,
    Instruction,
    arch_cubins,
    count_main,
    cuobjdump,
    demangle,
    functions,
    parse,
    yaml_lines,
)

WARPS = 4  # 128 threads: (warp, num_threads() / warp) in layer_norm_kernel.cu
VECTOR_ELEMENTS = 4  # vec_size in layer_norm_kernel.cu
SLOW_PATH = 5  # most instructions a slow-path detour (MOV, MOV, CALL, BRA) takes
# Warp instructions one SMSP completes per clock on each pipe: results per clock per SM
# (CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table) over 4 SMSPs of
# 32 lanes. FP32 add, multiply, multiply-add: 64 (8.0) or 128 (8.6, 8.9, 9.0); 32-bit integer
# multiply-add 64 (on the FP32 "fma" pipe: FP32 and IMAD share it on 8.0, IMAD takes its
# "heavy" half on 8.6 and 9.0, Nsight Compute's pipe descriptions); integer add, compare,
# shift and logic ("alu") 64; reciprocal, square root and the other special functions 16.
# The same rates hold for 10.0 (Blackwell), whose code PyTorch 2.14 also carries.
PIPE_RATE = {
    "sm_80": {"fp32": 0.5, "imad": 0.5, "alu": 0.5, "xu": 0.125},
    "sm_86": {"fp32": 1.0, "imad": 0.5, "alu": 0.5, "xu": 0.125},
    "sm_90": {"fp32": 1.0, "imad": 0.5, "alu": 0.5, "xu": 0.125},
    "sm_100": {"fp32": 1.0, "imad": 0.5, "alu": 0.5, "xu": 0.125},
}
_FP32 = ("FADD", "FMUL", "FFMA", "HADD2", "HMUL2", "HFMA2")
_NO_PIPE = ("LD", "ST", "SHFL", "BAR", "BRA", "BSSY", "BSYNC", "CALL", "EXIT", "RET", "S2R")
_TWO_PREDICATES = re.compile(r"BRA\s+!?P\d")


def pipe_of(opcode: str) -> str | None:
    """The arithmetic pipe an instruction occupies (``None``: memory, control, uniform)."""
    base = opcode.split(".", maxsplit=1)[0]
    if base in _FP32 and not opcode.startswith("HFMA2.MMA"):
        return "fp32"
    if base in ("IMAD", "IMUL"):
        return "imad"
    if base in ("MUFU", "I2F", "F2I", "F2F", "FRND"):
        return "xu"
    if base.startswith(_NO_PIPE) or base.startswith("U") or base in ("S2UR", "HFMA2", "NOP"):
        return None
    return "alu"


def issue_cycles(code: Sequence[Instruction], arch: str) -> float:
    """Cycles one SMSP needs for a warp's ``code`` when nothing else holds it: the busiest of
    its issue slot (one instruction per clock) and pipes; FP32 and IMAD share the fma pipe."""
    counts = Counter(pipe_of(ins.opcode) for ins in code)
    rate = PIPE_RATE[arch]
    fma = (counts["fp32"] + counts["imad"]) / rate["fp32"]
    return max(
        float(len(code)),
        fma,
        counts["imad"] / rate["imad"],
        counts["alu"] / rate["alu"],
        counts["xu"] / rate["xu"],
    )


def _loads_memory(code: Sequence[Instruction]) -> bool:
    return any(ins.opcode.startswith(("LDG", "STG")) for ins in code)


def _forward_taken(code: Sequence[Instruction], i: int, goal: int) -> bool:
    """Whether the walk takes the conditional forward branch at ``i`` to ``goal``."""
    skipped = code[i + 1 : goal]
    if len(skipped) <= SLOW_PATH and any(s.opcode.startswith("CALL") for s in skipped):
        return True
    if _TWO_PREDICATES.search(code[i].text):
        return True
    last = BRANCH.match(skipped[-1].text) if skipped else None
    if last is None or last.group(1) is not None:
        return False
    join = next(j for j, ins in enumerate(code) if ins.address == int(last.group(2), 16))
    return join - goal > len(skipped)  # the longer arm of an if/else


def walk(code: Sequence[Instruction]) -> tuple[list[Instruction], list[tuple[int, int]]]:
    """Warp 0's path through the kernel (module docstring) and the per-element loops on it,
    as (first, last) indices."""
    index = {ins.address: i for i, ins in enumerate(code)}
    path: list[Instruction] = []
    runs: Counter[int] = Counter()
    loops: list[tuple[int, int]] = []
    i = 0
    while not (code[i].opcode == "EXIT" and not code[i].text.startswith("@")):
        path.append(code[i])
        if len(path) > 20 * len(code):
            raise SystemExit("the walk does not reach the kernel's EXIT")
        match = BRANCH.match(code[i].text)
        goal = index[int(match.group(2), 16)] if match else i + 1
        if match and goal < i:  # a loop
            runs[i] += 1
            if _loads_memory(code[goal : i + 1]):
                loops.append((goal, i))
            elif runs[i] < math.log2(WARPS):
                i = goal
                continue
        elif match and (match.group(1) is None or _forward_taken(code, i, goal)):
            i = goal
            continue
        i += 1
    path.append(code[i])
    return path, sorted(set(loops))


def loop_path(code: Sequence[Instruction], first: int, last: int) -> list[Instruction]:
    """One iteration of the loop ``code[first..last]`` on its common path."""
    index = {ins.address: i for i, ins in enumerate(code)}
    path, i = [], first
    while i <= last:
        path.append(code[i])
        match = BRANCH.match(code[i].text)
        goal = index[int(match.group(2), 16)] if match else i + 1
        if match and goal > i and (match.group(1) is None or _forward_taken(code, i, goal)):
            i = goal
            continue
        i += 1
    return path


def _elements(body: Sequence[Instruction]) -> int:
    """Elements one iteration handles: 4 per vector store (the normalise loop), else 4 per
    vector load of the input (the Welford loop: ``LDG.E.64`` or ``.128``, read-only)."""
    stores = sum(ins.opcode.startswith("STG.E.") and ins.opcode != "STG.E.U16" for ins in body)
    loads = sum(ins.opcode.startswith("LDG") and "CONSTANT" in ins.opcode for ins in body)
    return VECTOR_ELEMENTS * (stores or loads)


def count_kernel(code: Sequence[Instruction], arch: str) -> dict[str, float]:
    """Instructions and issue cycles per element and instructions per row (module docstring)."""
    path, loops = walk(code)
    bodies = [loop_path(code, first, last) for first, last in loops]
    per_pass: dict[bool, tuple[int, list[Instruction]]] = {}
    for body in bodies:
        normalise = any(ins.opcode.startswith("STG") for ins in body)
        elements = _elements(body)
        if elements > per_pass.get(normalise, (0, []))[0]:
            per_pass[normalise] = (elements, body)
    if len(per_pass) != 2:
        raise SystemExit(f"{arch}: expected a Welford and a normalise loop")
    return {
        "instructions_per_element": sum(len(b) / n for n, b in per_pass.values()),
        "cycles_per_element": sum(issue_cycles(b, arch) / n for n, b in per_pass.values()),
        "row_instructions": float(len(path) - sum(len(b) for b in bodies)),
    }


KERNELS = {"layer_norm": "false", "rms_norm": "true"}  # the kernel's last template argument


def count(
    library: Path, arch: str, tool: str, workdir: Path
) -> dict[str, dict[str, dict[str, float]]]:
    """Each kernel's (``KERNELS``) and dtype's counts on ``arch`` (``count_kernel``)."""
    listings: dict[str, str] = {}
    for cubin in arch_cubins(library, arch, tool, workdir):
        if b"vectorized_layer_norm_kernel" in cubin.read_bytes():
            listings.update(functions(cuobjdump(tool, ["-sass", str(cubin)])))
    names = list(listings)
    plain = dict(zip(names, demangle(names), strict=True))
    out: dict[str, dict[str, dict[str, float]]] = {kernel: {} for kernel in KERNELS}
    for kernel, flag in KERNELS.items():
        for dtype, type_name in DTYPES.items():
            wanted = f"vectorized_layer_norm_kernel<{type_name}, float, {flag}>"
            found = [n for n in names if wanted in plain[n]]
            if not found:
                raise SystemExit(f"{arch} {dtype}: no {wanted} kernel")
            out[kernel][dtype] = count_kernel(parse(listings[found[0]]), arch)
    return out


def _write(
    path: Path, counts: dict[str, dict[str, dict[str, dict[str, float]]]], library: Path
) -> None:
    lines = [
        "# What one thread of ATen's vectorized_layer_norm_kernel issues, counted from SASS,",
        "# not fitted, for the layer norm and its RMS variant (rms_norm): per element,",
        "# instructions and issue cycles (the busiest of the SMSP's issue slot and pipes at",
        "# the CUDA C++ Programming Guide's throughputs) of the statistics and normalise loops;",
        "# per row, the instructions outside them (prologue, reductions, epilogue) on warp",
        f"# 0's path. From {library.name}.",
        "# Written by `python scripts/count_layer_norm_sass.py --write FILE` (see its",
        "# docstring); read by opmodel.models.streaming.counted. sm_89 runs the sm_86 code;",
        "# other architectures have no counts.",
        "source: PyTorch 2.14.1 (torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl),"
        " torch/lib/libtorch_cuda.so, disassembled with cuobjdump 13.5.37",
    ]
    for kernel in KERNELS:
        lines.append(f"{kernel}:")
        lines += yaml_lines({arch: c[kernel] for arch, c in counts.items()})
    path.write_text("\n".join(lines) + "\n")


def _report(counts: dict[str, dict[str, dict[str, dict[str, float]]]]) -> list[str]:
    return [
        f"{arch:6s} {kernel:10s} {dtype:4s} {v['instructions_per_element']:6.2f} instructions "
        f"and {v['cycles_per_element']:6.2f} cycles per element, "
        f"{v['row_instructions']:4.0f} instructions per row"
        for arch, by_kernel in counts.items()
        for kernel, by_dtype in by_kernel.items()
        for dtype, v in by_dtype.items()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    return count_main(__doc__ or "", argv, tuple(PIPE_RATE), (count, _report, _write))


if __name__ == "__main__":
    sys.exit(main())
