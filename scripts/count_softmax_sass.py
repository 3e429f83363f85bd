"""Count what ATen's register softmax issues per row, and its softmax kernels' registers, from
their SASS.

Usage:
    python scripts/count_softmax_sass.py --library torch/lib/libtorch_cuda.so \
        [--arch sm_90 ...] [--cuobjdump cuobjdump] [--workdir DIR] [--write FILE]

Tools and inputs as ``scripts/count_aten_sass.py`` (no GPU). The kernel is
``cunn_SoftMaxForwardReg<T, float, T, SoftMaxForwardEpilogue, long, N>`` (ATen's SoftMax.cu):
one row per CTA of up to 1,024 threads, each thread holding ``N`` (1-9) of the row's elements in
registers, all loaded at once; a block max and a block sum (shuffles, shared memory, barriers),
then each element's ``exp`` and division and its store, unrolled. For every ``N``, dtype and
architecture the script walks the path one thread of warp 0 runs on a full row (the rules of
``scripts/count_layer_norm_sass.py``: slow paths behind a ``CALL`` skipped, no element out of
range) and takes its issue cycles (the busiest of the SMSP's issue slot and pipes, that
script's ``PIPE_RATE``) and the kernel's registers (``cuobjdump -res-usage``), which set how
many 1,024-thread CTAs share an SM. It also reads the registers of ATen's warp softmax,
``softmax_warp_forward<T, T, float, log2_elements, false, false>`` (PersistentSoftmax.cuh: a
softmax, not a log-softmax, unmasked) for ``log2_elements`` 0-11 (rows of 1 to 2,048 elements),
which set how many of its 128-thread CTAs share an SM (80 for 2,048 elements, 40 for 512 where
an estimate of one register per value held and 16 more gave 32). ``--write`` writes the YAML
file the project ships as ``src/opmodel/configs/instructions/aten_softmax.yaml``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from count_layer_norm_sass import PIPE_RATE, issue_cycles, walk
from sass_listing import (
    DTYPES,
    arch_cubins,
    count_main,
    cuobjdump,
    demangle,
    functions,
    parse,
    yaml_lines,
)

ELEMENTS_PER_THREAD = range(1, 10)  # the kernel's instances, 1 to 9 (SoftMax.cu)
WARP_LOG2_ELEMENTS = range(12)  # the warp softmax's instances: rows of 2^0 to 2^11 elements
_RESOURCES = re.compile(r"Function ([^\s:]+):\s*\n\s*REG:(\d+)")


def registers(usage: str) -> dict[str, int]:
    """Mangled name -> registers per thread, from a ``cuobjdump -res-usage`` listing."""
    return {name: int(count) for name, count in _RESOURCES.findall(usage)}


def _kernel_name(dtype: str, per_thread: int) -> str:
    type_name = DTYPES[dtype]
    epilogue = "at::native::(anonymous namespace)::SoftMaxForwardEpilogue"
    return (
        f"cunn_SoftMaxForwardReg<{type_name}, float, {type_name}, {epilogue}, long, {per_thread}>"
    )


def _warp_name(dtype: str, log2_elements: int) -> str:
    """The warp softmax's instance for ``dtype`` rows of ``2^log2_elements`` elements, up to
    the template arguments after ``is_masked`` (later PyTorch versions add one)."""
    type_name = DTYPES[dtype]
    return f"softmax_warp_forward<{type_name}, {type_name}, float, {log2_elements}, false, false"


def _warp_registers(
    names: Sequence[str], plain: dict[str, str], usage: dict[str, int], arch: str, dtype: str
) -> list[int]:
    """The warp softmax's registers for rows of 2^0 to 2^11 elements."""
    out = []
    for log2_elements in WARP_LOG2_ELEMENTS:
        wanted = _warp_name(dtype, log2_elements)
        found = [n for n in names if re.search(re.escape(wanted) + r"[,>]", plain[n])]
        if not found or found[0] not in usage:
            raise SystemExit(f"{arch} {dtype}: no {wanted}> kernel with its registers")
        out.append(usage[found[0]])
    return out


def count(library: Path, arch: str, tool: str, workdir: Path) -> dict[str, dict[str, list[int]]]:
    """Per dtype, the register softmax's issue cycles per row of one thread and its registers
    for N = 1-9, and the warp softmax's registers for rows of 2^0 to 2^11 elements."""
    listings: dict[str, str] = {}
    usage: dict[str, int] = {}
    for cubin in arch_cubins(library, arch, tool, workdir):
        data = cubin.read_bytes()
        if b"cunn_SoftMaxForwardReg" in data:
            listings.update(functions(cuobjdump(tool, ["-sass", str(cubin)])))
        if b"cunn_SoftMaxForwardReg" in data or b"softmax_warp_forward" in data:
            usage.update(registers(cuobjdump(tool, ["-res-usage", str(cubin)])))
    names = list(listings)
    plain = dict(zip(names, demangle(names), strict=True))
    used = list(usage)
    used_plain = dict(zip(used, demangle(used), strict=True))
    out: dict[str, dict[str, list[int]]] = {}
    for dtype in DTYPES:
        cycles, regs = [], []
        for per_thread in ELEMENTS_PER_THREAD:
            wanted = _kernel_name(dtype, per_thread)
            found = [n for n in names if wanted in plain[n]]
            if not found or found[0] not in usage:
                raise SystemExit(f"{arch} {dtype}: no {wanted} kernel with its registers")
            path, _ = walk(parse(listings[found[0]]))
            cycles.append(round(issue_cycles(path, arch)))
            regs.append(usage[found[0]])
        warp = _warp_registers(used, used_plain, usage, arch, dtype)
        out[dtype] = {"cycles_per_row": cycles, "registers": regs, "warp_registers": warp}
    return out


def _write(path: Path, counts: dict[str, dict[str, dict[str, list[int]]]], library: Path) -> None:
    lines = [
        "# ATen's register softmax (cunn_SoftMaxForwardReg), counted from SASS, not fitted:",
        "# for N = 1-9 elements per thread, the issue cycles one thread of warp 0 takes for a",
        "# whole row (its loads, block max and sum, exp, division and stores; the busiest of",
        "# the SMSP's issue slot and pipes at the CUDA C++ Programming Guide's throughputs) and",
        "# the kernel's registers per thread (cuobjdump -res-usage); and the registers of ATen's",
        "# warp softmax (softmax_warp_forward) for rows of 2^0 to 2^11 elements. From",
        f"# {library.name}.",
        "# Written by `python scripts/count_softmax_sass.py --write FILE` (see its docstring);",
        "# read by opmodel.models.streaming.counted. sm_89 runs the sm_86 code; other",
        "# architectures have no counts.",
        "source: PyTorch 2.14.1 (torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl),"
        " torch/lib/libtorch_cuda.so, disassembled with cuobjdump 13.5.37",
        "register_softmax:",
    ]
    register = {
        arch: {dtype: {k: v[k] for k in ("cycles_per_row", "registers")} for dtype, v in d.items()}
        for arch, d in counts.items()
    }
    warp = {
        arch: {dtype: {"registers": v["warp_registers"]} for dtype, v in d.items()}
        for arch, d in counts.items()
    }
    lines += yaml_lines(register)
    lines.append("warp_softmax:  # registers by log2 of the row's elements rounded up, 0-11")
    lines += yaml_lines(warp)
    path.write_text("\n".join(lines) + "\n")


def _report(counts: dict[str, dict[str, dict[str, list[int]]]]) -> list[str]:
    return [
        f"{arch:6s} {dtype:4s} cycles per row {v['cycles_per_row']}, registers {v['registers']},"
        f" warp softmax registers {v['warp_registers']}"
        for arch, by_dtype in counts.items()
        for dtype, v in by_dtype.items()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    return count_main(__doc__ or "", argv, tuple(PIPE_RATE), (count, _report, _write))


if __name__ == "__main__":
    sys.exit(main())
