"""Count the instructions ATen's non-contiguous elementwise kernel issues per element, from SASS.

Usage:
    python scripts/count_aten_broadcast_sass.py --library torch/lib/libtorch_cuda.so \
        [--arch sm_90 ...] [--cuobjdump cuobjdump] [--workdir DIR] [--write FILE]

``--library`` is ``libtorch_cuda.so`` from a CUDA build of PyTorch (the wheel is a zip file);
``cuobjdump`` and ``nvdisasm`` (PyPI packages ``nvidia-cuda-cuobjdump`` and
``nvidia-cuda-nvdisasm``) must be on ``PATH``; no GPU. An elementwise op whose operands are not
all contiguous, a broadcast input among them (``x + bias``, a mask added to attention scores),
does not take ATen's vectorized kernel: ``gpu_kernel_impl_nocast`` (CUDALoops.cuh) launches
``elementwise_kernel<128, vt>`` (``launch_legacy_kernel``; ``vt`` = 4 elements a thread for a
16-bit output, 2 for a 4-byte one), whose threads take their elements 128 apart, one after
another: each element's offsets come from ``OffsetCalculator::get``, a divide (a multiply-high
and a shift) and a multiply-add per operand for each of the iterator's ``dims`` coalesced
dimensions, then the element's scalar loads, the function and its store.

For each function and dtype the script takes that kernel's SASS on the architecture and walks
one element's path (from its ``idx < N`` test to the next element's) for ``dims`` = 1 to 4:
the dimension loop is unrolled, each dimension's block ending in a test of ``dims`` against its
index whose branch leaves the loop. A conditional forward branch over a ``CALL`` skips a library
function's slow path (the division's special cases), which the common case does not run, and is
taken. Every other instruction on the path takes an issue slot. The
counts grow by the same number of instructions per dimension; the script writes that step
(``dim_instructions``) and the rest (``element_instructions``), averaged over every element
but the last (whose path runs to the kernel's exit, not to a next element's test).
``--write`` writes the YAML file the project ships as
``src/opmodel/configs/instructions/aten_broadcast.yaml``.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from sass_listing import (
    BRANCH,
    Instruction,
    arch_cubins,
    count_main,
    cuobjdump,
    demangle,
    flow,
    functions,
    parse,
    where_lambda,
    yaml_lines,
)

# function (attr ``function`` of an elementwise op) -> (a substring of its functor's name, the
# functor's name as a mangled symbol carries it)
FUNCTIONS = {
    "add": ("CUDAFunctor_add<", "CUDAFunctor_add"),
    "mul": ("BinaryFunctor<", "MulFunctor"),  # and MulFunctor: two tensors, not a scalar's
    "div": ("BinaryFunctor<", "DivFunctor"),  # a / b, the IEEE division (a 0-dim CUDA divisor)
    # torch.where(cond, a, b): a bool and two operands, dispatched by element size
    "where": ("where_kernel_impl", "where_kernel_impl"),
    # F.silu of a strided view (one half of torch.chunk(y, 2, -1), eager SwiGLU)
    "silu": ("::silu_kernel(", "silu_kernel"),
}
# dtype -> (its C++ type in kernel names, elements a thread handles: vt)
DTYPES = {"bf16": ("c10::BFloat16", 4), "fp16": ("c10::Half", 4), "fp32": ("float", 2)}
_OTHER_TYPES = ("BFloat16", "Half", "complex", "double", "bool")  # excluded from fp32
# ``idx < N``: N from the constant bank, or a uniform register loaded from it (sm_90 on)
_ELEMENT_TEST = re.compile(r"^ISETP\.GE\.AND P\d, PT, R\d+, (?:c\[0x0\]\[0x[0-9a-f]+\]|UR\d+), PT")
# ``dims != k``: against an immediate k, or ``dims != 0`` (RZ against the bank or a register)
_DIMS_TEST = re.compile(r"^ISETP\.NE\.AND P\d, PT, (\S+), (\S+), PT")
DIMS = (1, 2, 3, 4)


def _kernel(listings: dict[str, str], plain: dict[str, str], function: str, dtype: str) -> str:
    """The listing of ``elementwise_kernel<128, vt>`` for ``function`` on ``dtype``."""
    type_name, vt = DTYPES[dtype]
    if function == "where":
        type_name = where_lambda(dtype)
    head = f"void at::native::elementwise_kernel<128, {vt}, at::native::gpu_kernel_impl_nocast<"
    needle = FUNCTIONS[function][0]
    for name, listing in listings.items():
        text = plain[name]
        if not text.startswith(head) or needle not in text or FUNCTIONS[function][1] not in text:
            continue
        # the scalar variants (a CPU scalar operand): CUDAFunctorOnSelf/OnOther, (A|B)Unary
        if any(scalar in text for scalar in ("OnSelf", "OnOther", "UnaryFunctor")):
            continue
        if type_name not in text:
            continue
        if function != "where" and dtype == "fp32" and any(o in text for o in _OTHER_TYPES):
            continue
        return listing
    raise SystemExit(f"{function} {dtype}: no elementwise_kernel<128, {vt}> found")


def element_starts(code: Sequence[Instruction]) -> list[int]:
    """Indices of each element's ``idx < N`` test."""
    return [i for i, ins in enumerate(code) if _ELEMENT_TEST.match(ins.text)]


def element_path(code: Sequence[Instruction], start: int, stop: int, dims: int) -> int:
    """Instructions one element runs from its test (index ``start``) to the next element's
    (``stop``) when the iterator has ``dims`` dimensions: an in-range element (its test's
    branch not taken), the dimension loop left after block ``dims``."""
    index = {ins.address: i for i, ins in enumerate(code)}
    i, count, block, tested = start, 0, -1, False
    while i < stop:
        ins = code[i]
        count += 1
        test = _DIMS_TEST.match(ins.text)
        if test and (test.group(2).startswith("0x") or "RZ" in test.groups()):
            block = int(test.group(2), 16) if test.group(2).startswith("0x") else 0
        branch = BRANCH.match(ins.text)
        if branch:
            goal = index[int(branch.group(2), 16)]
            predicate = (branch.group(1) or "").strip()
            # a forward branch over a CALL, other than the element test's own (the first):
            # the slow path skipped
            inside = tested and i < goal < stop
            slow = inside and any(s.opcode.startswith("CALL") for s in code[i + 1 : goal])
            tested = True
            if not predicate or slow or (predicate.startswith("@!") and block == dims):
                i, block = goal, -1
                continue
        i += 1
    return count


def per_dimension(code: Sequence[Instruction]) -> dict[str, float]:
    """``element_instructions`` and ``dim_instructions`` of the kernel (module docstring),
    from every element but the last; a ValueError when the counts do not grow linearly."""
    starts = element_starts(code)
    if len(starts) < 2:
        raise ValueError(f"expected at least 2 element tests, found {len(starts)}")
    spans = list(itertools.pairwise(starts))
    counts = [sum(element_path(code, a, b, d) for a, b in spans) / len(spans) for d in DIMS]
    steps = {round(counts[k + 1] - counts[k], 6) for k in range(len(DIMS) - 1)}
    if len(steps) != 1:
        raise ValueError(f"the counts do not grow linearly with the dimensions: {counts}")
    step = steps.pop()
    return {"element_instructions": round(counts[0] - step, 4), "dim_instructions": step}


def count(library: Path, arch: str, tool: str, workdir: Path) -> dict[str, dict[str, str]]:
    """Per dtype, per function, the two numbers of :func:`per_dimension` as a flow mapping."""
    cubins = arch_cubins(library, arch, tool, workdir)
    out: dict[str, dict[str, str]] = {dtype: {} for dtype in DTYPES}
    for function, (_, mangled) in FUNCTIONS.items():
        listings: dict[str, str] = {}
        for cubin in cubins:
            if mangled.encode() in cubin.read_bytes():
                listings.update(functions(cuobjdump(tool, ["-sass", str(cubin)])))
        names = list(listings)
        plain = dict(zip(names, demangle(names), strict=True))
        for dtype in DTYPES:
            code = parse(_kernel(listings, plain, function, dtype))
            out[dtype][function] = "{" + flow(per_dimension(code)) + "}"
    return out


def _write(path: Path, counts: dict[str, dict[str, dict[str, str]]], library: Path) -> None:
    lines = [
        "# Instructions per element of ATen's non-contiguous elementwise kernel",
        "# (elementwise_kernel<128, vt> of gpu_kernel_impl_nocast: broadcast inputs), counted",
        f"# from SASS, not fitted, in {library.name}: an element issues element_instructions",
        "# + dim_instructions x the iterator's coalesced dimensions (its offsets, loads,",
        "# function and store). Written by `python scripts/count_aten_broadcast_sass.py --write",
        "# FILE` (see its docstring); read by opmodel.models.streaming.counted. sm_89 runs the",
        "# sm_86 code; other architectures have no counts.",
        "source: PyTorch 2.14.1 (torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl),"
        " torch/lib/libtorch_cuda.so, disassembled with cuobjdump and nvdisasm 13.5.37",
        "broadcast:",
    ]
    lines += yaml_lines(counts, _functions)
    path.write_text("\n".join(lines) + "\n")


def _functions(by_function: dict[str, str]) -> str:
    return ", ".join(f"{name}: {value}" for name, value in sorted(by_function.items()))


def _report(counts: dict[str, dict[str, dict[str, str]]]) -> list[str]:
    return [
        f"{arch:6s} {dtype:4s} {name:4s} {value}"
        for arch, by_dtype in counts.items()
        for dtype, by_function in by_dtype.items()
        for name, value in by_function.items()
    ]


# sm_100's code takes another shape (its unrolled loop duplicated per element count); not read
ARCHITECTURES = ("sm_80", "sm_86", "sm_90")


def main(argv: Sequence[str] | None = None) -> int:
    return count_main(__doc__.split("\n")[0], argv, ARCHITECTURES, (count, _report, _write))


if __name__ == "__main__":
    sys.exit(main())
