"""Count what ATen's reduce kernel issues per element, from its SASS.

Usage:
    python scripts/count_reduce_sass.py --library torch/lib/libtorch_cuda.so \
        [--arch sm_90 ...] [--cuobjdump cuobjdump] [--workdir DIR] [--write FILE]

Tools and inputs as ``scripts/count_aten_sass.py`` (no GPU). The kernel is ``reduce_kernel<512,
1, ReduceOp<T, ops, unsigned int, out, 4, input_vec_size>>`` (aten/src/ATen/native/cuda/
Reduce.cuh), the launch of a reduction over the innermost axis, for each function the model
names (``FUNCTIONS``: sum, mean, max, min, argmax, argmin; ``torch.max(x)`` and ``amax`` run
``MaxNanFunctor``, ``torch.argmax`` ``ArgMaxOps<float>`` with a 64-bit index) and dtype.

Each thread walks its share of the row in a loop, one step per round trip:

- vectorized (``input_vec_size = 4``: every function but 16-bit sum and mean, which PyTorch
  instantiates with 8 and so cannot vectorize): the loop whose body loads one 4-element vector
  (``LDG.E.64`` for a 16-bit dtype, ``LDG.E.128`` for fp32), then folds its 4 values into 4
  accumulators (``input_vectorized_thread_reduce_impl``);
- 16-bit sum and mean: ``thread_reduce_impl`` on a contiguous input, four scalar loads a step;
  the kernel holds that loop three times (contiguous, one stride, a general offset
  calculator), and the contiguous one is the shortest of those with four 16-bit loads.

One iteration's common path (``count_layer_norm_sass.loop_path``: a conditional forward branch
falls through unless it skips a library call's slow path; of an if/else the longer arm, here
the comparison of a number with the accumulator over the arm for a NaN accumulator) over its 4
elements gives the instructions per element (the report's first figure) and the issue cycles
per element (its second): the busiest of
the SMSP's issue slot and pipes (``count_layer_norm_sass.issue_cycles``; the comparisons and
selects of max, min and argmax run on the integer ALU pipe, 16 lanes an SMSP). ``--write``
writes the YAML file the project ships as ``src/opmodel/configs/instructions/aten_reduce.yaml``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from count_layer_norm_sass import PIPE_RATE, issue_cycles, loop_path
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
    res_usage,
    yaml_lines,
)

STEP_ELEMENTS = 4  # vt0 and input_vec_size: the elements one loop iteration folds in
# function -> the ReduceOp's operation for scalar type T (demangled)
FUNCTIONS = {
    "sum": "at::native::func_wrapper_t<{T}, at::native::sum_functor<{T}, float, {T}>::",
    "mean": "at::native::MeanOps<{T}, float, float, {T}>, ",
    "max": "at::native::func_wrapper_t<{T}, at::native::MaxNanFunctor<{T}> >, ",
    "min": "at::native::func_wrapper_t<{T}, at::native::MinNanFunctor<{T}> >, ",
    "argmax": "at::native::ArgMaxOps<float>, ",
    "argmin": "at::native::ArgMinOps<float>, ",
}
_SCALAR_LOADS = "LDG.E.U16"


OUTPUT_VECTORS = (1, 2, 4)  # reduce_kernel<512 / v, v>: v outputs a load (leading axes)


def kernel_name(function: str, dtype: str, output_vector: int = 1) -> str:
    """The demangled prefix of the kernel of ``function`` on ``dtype`` that loads
    ``output_vector`` outputs at once (``512 / output_vector`` threads)."""
    scalar = DTYPES[dtype]
    operation = FUNCTIONS[function].format(T=scalar)
    threads = 512 // output_vector
    return (
        f"void at::native::reduce_kernel<{threads}, {output_vector}, "
        f"at::native::ReduceOp<{scalar}, {operation}"
    )


def vectorized(function: str, dtype: str) -> bool:
    """ATen vectorizes the loads unless ``input_vec_size`` (8 for 16-bit sum and mean) > 4."""
    return not (dtype != "fp32" and function in ("sum", "mean"))


def _loops(code: Sequence[Instruction]) -> list[tuple[int, int]]:
    """(first, last) indices of every loop: a backward branch and its target."""
    index = {ins.address: i for i, ins in enumerate(code)}
    out = []
    for i, ins in enumerate(code):
        match = BRANCH.match(ins.text)
        if match and int(match.group(2), 16) <= ins.address:
            out.append((index[int(match.group(2), 16)], i))
    return out


def _loads(body: Sequence[Instruction]) -> list[str]:
    return [ins.opcode for ins in body if ins.opcode.startswith("LDG")]


_LOAD_WIDTH = {2: _SCALAR_LOADS, 4: "LDG.E", 8: "LDG.E.64", 16: "LDG.E.128"}  # bytes a load


def _shortest_loop(code: Sequence[Instruction], loads: list[str], what: str) -> list[Instruction]:
    """One iteration, on its common path, of the shortest loop whose global loads are
    ``loads`` (of a kernel's variants of one loop, the contiguous one)."""
    found = [
        (last - first, first, last)
        for first, last in _loops(code)
        if _loads(code[first : last + 1]) == loads
    ]
    if not found:
        raise SystemExit(f"no {what}")
    _, first, last = min(found)
    return loop_path(code, first, last)


def step_loop(code: Sequence[Instruction], vector: bool, dtype: str) -> list[Instruction]:
    """One iteration of the loop a contiguous row runs (module docstring), on its common path:
    one 4-element vector load, or four scalar 16-bit loads."""
    element = 4 if dtype == "fp32" else 2
    if vector:
        return _shortest_loop(code, [_LOAD_WIDTH[4 * element]], "vector loop over the row")
    return _shortest_loop(code, [_SCALAR_LOADS] * STEP_ELEMENTS, "scalar loop over the row")


def leading_loop(code: Sequence[Instruction], dtype: str, outputs: int) -> list[Instruction]:
    """One iteration, on its common path, of the loop a thread of ``reduce_kernel<512 / v,
    v>`` walks the reduced (leading) axis with: ``vt0 = 4`` loads of ``v = outputs`` outputs
    each (the shortest such loop: the contiguous one of its three)."""
    width = _LOAD_WIDTH[outputs * (4 if dtype == "fp32" else 2)]
    what = f"loop of four {width} loads over the reduced axis"
    return _shortest_loop(code, [width] * STEP_ELEMENTS, what)


def count_kernel(
    code: Sequence[Instruction], arch: str, vector: bool, dtype: str
) -> tuple[float, float]:
    """(instructions, issue cycles) per element of the row loop's iteration (module
    docstring)."""
    path = step_loop(code, vector, dtype)
    return len(path) / STEP_ELEMENTS, issue_cycles(path, arch) / STEP_ELEMENTS


# field -> dtype -> function -> a count per element, or registers per output vector (1, 2, 4)
Table = dict[str, dict[str, dict[str, float | list[int] | list[float]]]]
FIELDS = ("instructions_per_element", "cycles_per_element")
LEADING = "leading_cycles_per_element"  # the <256, 2> and <128, 4> launches' loops


def _mangled(library: Path, arch: str, tool: str) -> dict[str, tuple[str, int]]:
    """Demangled name -> (mangled name, registers per thread) of the library's reduce kernels
    on ``arch`` (``cuobjdump -res-usage``)."""
    listing = cuobjdump(tool, ["-res-usage", "-arch", arch, str(library)])
    found = dict(res_usage(listing))
    names = sorted(name for name in found if "13reduce_kernelILi" in name)
    return {plain: (m, found[m]) for plain, m in zip(demangle(names), names, strict=True)}


def _find(by_name: dict[str, tuple[str, int]], prefix: str, where: str) -> tuple[str, int]:
    found = [value for plain, value in by_name.items() if plain.startswith(prefix)]
    if not found:
        raise SystemExit(f"{where}: no kernel {prefix}...")
    return found[0]


def _code(tool: str, name: str, holder: Path) -> list[Instruction]:
    """The SASS of kernel ``name`` in the cubin ``holder``."""
    sass = functions(cuobjdump(tool, ["-sass", "-fun", name, str(holder)]))
    return parse(next(iter(sass.values())))


def count(library: Path, arch: str, tool: str, workdir: Path) -> Table:
    """Each dtype's and function's instructions and issue cycles per element on ``arch``,
    the registers of its three launches and the cycles of the two that load 2 or 4 outputs."""
    by_name = _mangled(library, arch, tool)
    kernels = {
        (d, f, v): _find(by_name, kernel_name(f, d, v), f"{arch} {d} {f} <{512 // v}, {v}>")
        for d in DTYPES
        for f in FUNCTIONS
        for v in OUTPUT_VECTORS
    }
    holders: dict[str, Path] = {}
    for cubin in arch_cubins(library, arch, tool, workdir):
        data = cubin.read_bytes()
        holders.update({m: cubin for m, _ in kernels.values() if m.encode() in data})
    fields = (*FIELDS, "registers", LEADING)
    out: Table = {field: {dtype: {} for dtype in DTYPES} for field in fields}
    for dtype in DTYPES:
        for function in FUNCTIONS:
            name = kernels[(dtype, function, 1)][0]
            code = _code(tool, name, holders[name])
            values = count_kernel(code, arch, vectorized(function, dtype), dtype)
            for field, value in zip(FIELDS, values, strict=True):
                out[field][dtype][function] = value
            row = [kernels[(dtype, function, v)] for v in OUTPUT_VECTORS]
            out["registers"][dtype][function] = [registers for _, registers in row]
            out[LEADING][dtype][function] = [
                issue_cycles(leading_loop(_code(tool, m, holders[m]), dtype, v), arch) / (4 * v)
                for (m, _), v in zip(row[1:], OUTPUT_VECTORS[1:], strict=True)
            ]
    return out


def _write(path: Path, counts: dict[str, Table], library: Path) -> None:
    lines = [
        "# ATen's reduce_kernel<512, 1> (a reduction over the innermost axis), counted from",
        "# SASS, not fitted: one iteration of the loop a thread walks its row with (a 4-element",
        "# vector, or for 16-bit sum and mean four scalar loads), its common path, over its 4",
        "# elements: the instructions per element, and the issue cycles per element (the",
        "# busiest of the SMSP's issue slot and pipes at the CUDA C++ Programming Guide's",
        f"# throughputs). From {library.name}. Written by `python scripts/count_reduce_sass.py",
        "# --write FILE` (see its docstring); read by opmodel.models.streaming.aten_reduce",
        "# (the cycles) and scripts/issue_energy_experiment.py (the instructions). sm_89 runs",
        "# the sm_86 code; other architectures have no counts. registers: per thread (cuobjdump",
        "# -res-usage) of reduce_kernel<512, 1>, <256, 2> and <128, 4>, the launches that load",
        "# 1, 2 or 4 outputs at once (leading axes reduced, get_output_vec_size);",
        "# leading_cycles_per_element: the issue cycles per element of the <256, 2> and <128, 4>",
        "# launches' loop over the reduced axis (four loads of 2 or 4 outputs a step).",
        "source: PyTorch 2.14.1 (torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl),"
        " torch/lib/libtorch_cuda.so, disassembled with cuobjdump and nvdisasm 13.5.37",
    ]
    for field in (*FIELDS, "registers", LEADING):
        lines += [f"{field}:", *yaml_lines({arch: table[field] for arch, table in counts.items()})]
    path.write_text("\n".join(lines) + "\n")


def _report(counts: dict[str, Table]) -> list[str]:
    lines = []
    for arch, table in counts.items():
        for dtype in DTYPES:
            cells = [
                f"{f} {table[FIELDS[0]][dtype][f]:5.2f}/{table[FIELDS[1]][dtype][f]:5.2f} "
                f"{table['registers'][dtype][f]}"
                for f in FUNCTIONS
            ]
            lines.append(f"{arch:6s} {dtype:4s} " + " ".join(cells))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return count_main(__doc__ or "", argv, tuple(PIPE_RATE), (count, _report, _write))


if __name__ == "__main__":
    sys.exit(main())
