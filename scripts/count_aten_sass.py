"""Count the instructions ATen's vectorized elementwise kernels issue per element, from SASS.

Usage:
    python scripts/count_aten_sass.py --library torch/lib/libtorch_cuda.so \
        [--arch sm_90 ...] [--cuobjdump cuobjdump] [--workdir DIR] [--write FILE]

``--library`` is ``libtorch_cuda.so`` from a CUDA build of PyTorch (the wheel is a zip file:
``python -m zipfile -e torch-*.whl DIR``); ``cuobjdump`` and ``nvdisasm`` (PyPI packages
``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm``) must be on ``PATH``. No GPU is needed;
about a minute per architecture. For each function below and each dtype (bf16, fp16, fp32)
the script extracts the architecture's cubins that hold the function's kernel and disassembles
the widest ``vectorized_elementwise_kernel<vec, ...>`` compiled for real there (PyTorch 2.14
builds the 8-wide one as a stub on sm_80 and sm_86, which run the 4-wide one twice per thread;
fp32 takes the 4-wide one, 16 bytes, twice per thread everywhere). It walks
the full-block path: from the test of the elements left against the CTA's work (``ISETP.GT``
with ``0x3ff``: 1,024 elements, 8 per thread of 128) to the kernel's ``EXIT``. A conditional
forward branch whose skipped range holds a ``CALL`` jumps over a library function's slow path
(the division's special cases, for instance), which the common case does not run; every other
instruction on the path, branches and convergence barriers included, takes an issue slot. The
count per element is that path's length over the elements a thread handles: the
instruction-issue cost of :mod:`opmodel.models.streaming.issue`, counted rather than fitted.
``--write`` writes the YAML file the project ships as
``src/opmodel/configs/instructions/aten_elementwise.yaml``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sass_listing import (
    BRANCH,
    Instruction,
    arch_cubins,
    cuobjdump,
    demangle,
    flow,
    functions,
    parse,
    run,
    where_lambda,
    yaml_lines,
)

# function (attr ``function`` of an elementwise op) -> a substring of its ATen kernel's name
FUNCTIONS = {
    "add": "CUDAFunctor_add",
    "mul": "MulFunctor",
    "relu": "launch_clamp_scalar",
    "exp": "native::exp_kernel_cuda(",
    "tanh": "native::tanh_kernel_cuda(",
    "sigmoid": "native::sigmoid_kernel_cuda(",
    "silu": "::silu_kernel(",
    "gelu_tanh": "GeluCUDAKernelImpl",
    "gelu": "GeluCUDAKernelImpl",
    "where": "where_kernel_impl",  # torch.where(cond, a, b): a bool and two operands
    "div": "binary_internal::DivFunctor",  # two tensors (BinaryFunctor), not a scalar's
}
# the GELU kernel holds both forms; the tanh form calls tanhf, the erf form erff
_GELU_FORM = {"gelu_tanh": "tanh", "gelu": "erf"}


def _block_test(code: Sequence[Instruction]) -> tuple[int, int, bool]:
    """(index, CTA work in elements, taken-means-full) of the full-block test: the first
    ``ISETP.GT`` / ``ISETP.GE`` (signed or ``.U32``) of the elements left against an immediate,
    ``> work - 1`` (its branch taken on a full block, PyTorch 2.14's sm_90 code) or ``>= work``
    (its branch, on ``!P``, taken on a partial one: 2.11's, and 2.14's sm_100)."""
    for i, ins in enumerate(code):
        parts = ins.opcode.split(".")  # ISETP.GT.AND, ISETP.GE.U32.AND, ...
        if parts[0] == "ISETP" and parts[1] in ("GT", "GE") and parts[-1] == "AND":
            operand = ins.text.split(",")[-2].strip()
            if operand.startswith("0x"):
                value = int(operand, 16)
                greater = parts[1] == "GT"
                return i, value + 1 if greater else value, greater
    raise ValueError("no full-block test")


def elements_per_thread(code: Sequence[Instruction]) -> int:
    """Elements one thread handles: the CTA's work in the full-block test (1,024 in
    ``ISETP.GT.AND P0, PT, R, 0x3ff``) over its 128 threads."""
    return _block_test(code)[1] // THREADS


def full_block_path(code: Sequence[Instruction]) -> list[Instruction]:
    """The instructions a thread of a full CTA runs (module docstring)."""
    index = {ins.address: i for i, ins in enumerate(code)}
    start, _, taken_full = _block_test(code)
    b = next(j for j in range(start, len(code)) if BRANCH.match(code[j].text))
    target = BRANCH.match(code[b].text)
    assert target is not None
    path = list(code[: b + 1])
    i = index[int(target.group(2), 16)] if taken_full else b + 1
    while i < len(code):
        ins = code[i]
        path.append(ins)
        if ins.opcode == "EXIT" and not ins.text.startswith("@"):
            return path
        match = BRANCH.match(ins.text)
        if match:
            goal = index[int(match.group(2), 16)]
            skipped = code[i + 1 : goal]
            slow = any(s.opcode.startswith("CALL") for s in skipped)
            if not match.group(1) or (goal > i and slow):
                i = goal
                continue
        i += 1
    raise ValueError("no EXIT on the full-block path")


THREADS = 128  # ATen's elementwise CTA (num_threads() in CUDALoops.cuh)
# dtype -> (its C++ type in kernel names, the vector widths ATen picks for it, widest first:
# 16 bytes or less; 8 and 4 elements for 16-bit types, 4 for fp32)
DTYPES = {
    "bf16": ("c10::BFloat16", (8, 4)),
    "fp16": ("c10::Half", (8, 4)),
    "fp32": ("float", (4,)),
}
_OTHER_TYPES = ("BFloat16", "Half", "complex", "double")  # excluded from the fp32 kernels


def _named(plain: str, function: str, dtype: str, vec: int, type_name: str) -> bool:
    """True when the demangled name ``plain`` is ``function``'s ``vec``-wide kernel on
    ``dtype`` (its type ``type_name``)."""
    if f"vectorized_elementwise_kernel<{vec}," not in plain or "complex" in plain:
        return False
    if type_name not in plain or FUNCTIONS[function] not in plain:
        return False
    if function == "div" and "UnaryFunctor" in plain:  # a scalar divisor's variant
        return False
    others = function != "where" and dtype == "fp32"
    return not (others and any(other in plain for other in _OTHER_TYPES))


def _kernel(
    listings: dict[str, str], plain_names: dict[str, str], function: str, dtype: str
) -> str:
    """The kernel ``function`` runs for ``dtype``: the widest ``vectorized_elementwise_kernel
    <vec>`` compiled for real on this architecture (PyTorch builds the 8-wide one as a stub
    where it does not use it), the longest if several."""
    type_name, widths = DTYPES[dtype]
    if function == "where":
        type_name = where_lambda(dtype)
    for vec in widths:
        found = []
        for name, listing in listings.items():
            if not _named(plain_names[name], function, dtype, vec, type_name):
                continue
            if any(i.opcode.startswith("LDG") for i in parse(listing)):  # a stub loads nothing
                found.append(listing)
        if function in _GELU_FORM:
            found = [f for f in found if _gelu_form(f) == _GELU_FORM[function]]
        if found:
            return max(found, key=lambda listing: len(parse(listing)))
    raise SystemExit(f"{function} {dtype}: no vectorized_elementwise_kernel found")


def _gelu_form(listing: str) -> str:
    """'tanh' for the tanh approximation (its cubic term's 0.044715 appears as an immediate),
    else 'erf'."""
    return "tanh" if "0.0447" in listing else "erf"


def count(library: Path, arch: str, tool: str, workdir: Path) -> dict[str, dict[str, float]]:
    """Instructions per element on the full-block path of each function's kernel, by dtype."""
    cubins = arch_cubins(library, arch, tool, workdir)
    out: dict[str, dict[str, float]] = {dtype: {} for dtype in DTYPES}
    for function, needle in FUNCTIONS.items():
        mangled = needle.strip(":(").split("::")[-1]  # as it appears in a mangled name
        listings: dict[str, str] = {}
        for cubin in cubins:
            if mangled.encode() in cubin.read_bytes():
                listings.update(functions(cuobjdump(tool, ["-sass", str(cubin)])))
        names = list(listings)
        plain_names = dict(zip(names, demangle(names), strict=True))
        for dtype in DTYPES:
            listing = _kernel(listings, plain_names, function, dtype)
            code = parse(listing)
            out[dtype][function] = len(full_block_path(code)) / elements_per_thread(code)
    return out


def _write(path: Path, counts: dict[str, dict[str, dict[str, float]]], library: Path) -> None:
    lines = [
        "# Instructions per element of ATen's vectorized_elementwise_kernel (8 elements per",
        "# thread: for a 16-bit dtype one 16-byte vector on sm_90, two 8-byte ones on sm_80 and",
        "# sm_86; for fp32 two 16-byte ones), counted from SASS, not fitted: the full-block",
        f"# path of each kernel in {library.name}, slow paths left out, over the elements a",
        "# thread handles.",
        "# Written by `python scripts/count_aten_sass.py --write FILE` (see its docstring);",
        "# read by opmodel.models.streaming.counted. sm_89 runs the sm_86 code (the wheel",
        "# carries no sm_89 SASS); other architectures have no counts.",
        "source: PyTorch 2.14.1 (torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl),"
        " torch/lib/libtorch_cuda.so, disassembled with cuobjdump and nvdisasm 13.5.37",
        "instructions_per_element:",
    ]
    lines += yaml_lines(counts, lambda by_function: flow(dict(sorted(by_function.items()))))
    path.write_text("\n".join(lines) + "\n")


def _report(counts: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    return [
        f"{arch:6s} {dtype:4s} {name:10s} {value:7.3f} instructions per element"
        for arch, by_dtype in counts.items()
        for dtype, by_function in by_dtype.items()
        for name, value in by_function.items()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    return run(__doc__.split("\n")[0], argv, count, _report, _write)


if __name__ == "__main__":
    sys.exit(main())
