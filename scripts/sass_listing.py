"""What the SASS counters share: a SASS listing's instructions, the CUDA tools that produce it,
and their command line (``scripts/count_aten_sass.py``, ``scripts/count_flash_sass.py``)."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
V = TypeVar("V")
WriteStep = Callable[[Path, dict[str, T], Path], None]
ARCHITECTURES = ("sm_80", "sm_86", "sm_90")  # the SASS the counters read (sm_89 runs sm_86's)
# the dtypes the counters count and their C++ scalar types in the demangled kernel names
DTYPES = {"bf16": "c10::BFloat16", "fp16": "c10::Half", "fp32": "float"}

_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
# torch.where's where_kernel_impl dispatches on element size: its lambda takes the condition
# and the two operands as unsigned integers of their width
_WHERE_OPERANDS = {"bf16": "unsigned short", "fp16": "unsigned short", "fp32": "unsigned int"}
BRANCH = re.compile(r"^(@!?U?P\d+\s+)?BRA\s+(?:\S+\s+)?0x([0-9a-f]+)")


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: its address and text (predicate, opcode and operands)."""

    address: int
    text: str

    @property
    def opcode(self) -> str:
        words = self.text.split()
        return words[1] if words[0].startswith("@") else words[0]


def where_lambda(dtype: str) -> str:
    """The demangled lambda signature of ``where_kernel_impl``'s kernels on ``dtype``."""
    operand = _WHERE_OPERANDS[dtype]
    return f"lambda(bool, {operand}, {operand})"


def parse(sass: str) -> list[Instruction]:
    """The instructions of one function's SASS listing."""
    out = []
    for line in sass.splitlines():
        match = _LINE.match(line)
        if match:
            out.append(Instruction(int(match.group(1), 16), match.group(2)))
    return out


def cuobjdump(tool: str, args: Sequence[str]) -> str:
    done = subprocess.run([tool, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tool} {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def functions(sass: str) -> dict[str, str]:
    """Mangled name -> listing, for every function in a cuobjdump -sass output."""
    parts = re.split(r"\n\s*Function : ", sass)
    return {part.split("\n", 1)[0].strip(): part for part in parts[1:]}


_RES_FUNCTION = re.compile(r"Function (\S+):")
_RES_REGISTERS = re.compile(r"REG:(\d+)")


def res_usage(listing: str) -> list[tuple[str, int]]:
    """(mangled name, registers per thread) of every function in a ``cuobjdump -res-usage``
    listing (a ``Function NAME:`` line, then its ``REG:n ...`` line)."""
    lines = listing.splitlines()
    out = []
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        function, count = _RES_FUNCTION.search(line), _RES_REGISTERS.search(following)
        if function and count:
            out.append((function.group(1), int(count.group(1))))
    return out


def res_usage_listings(args: argparse.Namespace) -> dict[str, str]:
    """``cuobjdump -res-usage`` of ``args.library`` for each of ``args.arch`` (the register
    counters' command line, :func:`register_arguments`)."""
    command = ("-res-usage", "-arch")
    return {a: cuobjdump(args.cuobjdump, [*command, a, str(args.library)]) for a in args.arch}


def register_arguments(
    description: str, argv: Sequence[str] | None, architectures: Sequence[str], name: str
) -> argparse.Namespace:
    """The register counters' command line: ``--library`` (libtorch_cuda.so, which must
    exist), ``--cuobjdump`` and ``--arch``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--library", type=Path, required=True, help="libtorch_cuda.so")
    parser.add_argument("--cuobjdump", default="cuobjdump")
    parser.add_argument("--arch", nargs="+", default=list(architectures))
    args = parser.parse_args(argv)
    if not args.library.exists():
        raise SystemExit(f"{name}: --library {args.library}: no such file")
    return args


def demangle(names: Sequence[str]) -> list[str]:
    done = subprocess.run(
        ["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def arch_cubins(library: Path, arch: str, tool: str, workdir: Path) -> list[Path]:
    """The library's ``arch`` cubins, extracted into ``workdir`` (kept ones are reused)."""
    found = sorted(workdir.glob(f"*.{arch}.cubin"))
    if not found:
        done = subprocess.run(
            [tool, "-xelf", arch, str(library.resolve())],
            cwd=workdir,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{tool} -xelf {arch} {library}: {done.stderr.strip()}")
        found = sorted(workdir.glob(f"*.{arch}.cubin"))
    if not found:
        raise SystemExit(f"{library}: no {arch} cubins")
    return found


def arguments(
    description: str, argv: Sequence[str] | None, architectures: Sequence[str] = ARCHITECTURES
) -> argparse.Namespace | None:
    """The SASS counters' command line (``--library``, ``--arch`` among ``architectures``,
    ``--cuobjdump``, ``--workdir``, ``--write``), or ``None`` after a one-line error on stderr
    when the library or the tool is missing."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument(
        "--arch",
        action="append",
        choices=architectures,
        help=f"one of {', '.join(architectures)} (repeat; default all)",
    )
    parser.add_argument("--cuobjdump", default="cuobjdump")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args(argv)
    args.arch = args.arch or list(architectures)
    if not args.library.is_file():
        print(f"--library: {args.library}: no such file", file=sys.stderr)
        return None
    if shutil.which(args.cuobjdump) is None:
        print(f"--cuobjdump: {args.cuobjdump}: not found on PATH", file=sys.stderr)
        return None
    if shutil.which("c++filt") is None:
        print("c++filt: not found on PATH (binutils), needed to read kernel names", file=sys.stderr)
        return None
    return args


def per_architecture(args: argparse.Namespace, counter: Callable[..., T]) -> dict[str, T]:
    """``counter(library, arch, tool, workdir)`` for each ``--arch`` (by default every
    architecture the counter reads), each in its own work folder (``--workdir``'s, else a
    temporary one)."""
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for arch in args.arch:
            workdir = (args.workdir or Path(tmp)) / arch
            workdir.mkdir(parents=True, exist_ok=True)
            counts[arch] = counter(args.library, arch, args.cuobjdump, workdir)
    return counts


def finish(
    args: argparse.Namespace,
    counts: dict[str, T],
    report: Callable[[dict[str, T]], list[str]],
    write: WriteStep[T],
) -> int:
    """Print ``report``'s lines and ``write`` the file with ``--write``."""
    print("\n".join(report(counts)))
    if args.write:
        write(args.write, counts, args.library)
    return 0


def count_main(
    description: str,
    argv: Sequence[str] | None,
    architectures: Sequence[str],
    steps: tuple[Callable[..., T], Callable[[dict[str, T]], list[str]], WriteStep[T]],
) -> int:
    """A SASS counter's main over ``architectures``: count each (``steps``: the counter, the
    report's lines, the file's writer), print the report, write the file with ``--write``; 2
    after a one-line error."""
    counter, report, write = steps
    args = arguments(description, argv, architectures)
    if args is None:
        return 2
    return finish(args, per_architecture(args, counter), report, write)


def run(
    description: str,
    argv: Sequence[str] | None,
    counter: Callable[..., T],
    report: Callable[[dict[str, T]], list[str]],
    write: WriteStep[T],
) -> int:
    """:func:`count_main` over ``ARCHITECTURES``."""
    return count_main(description, argv, ARCHITECTURES, (counter, report, write))


def flow(values: Mapping[str, float | Sequence[int]]) -> str:
    """``values`` as the inside of a YAML flow mapping: numbers as ``%g``, lists in brackets."""
    return ", ".join(
        f"{name}: [{', '.join(map(str, v))}]" if isinstance(v, Sequence) else f"{name}: {v:g}"
        for name, v in values.items()
    )


def yaml_lines(
    counts: dict[str, dict[str, V]],
    items: Callable[[V], str] = flow,  # type: ignore[assignment]
) -> list[str]:
    """A counts file's table: per architecture (``sm90``), one line per dtype holding
    ``items`` of its values as a flow mapping (by default :func:`flow`)."""
    lines = []
    for arch, by_dtype in counts.items():
        lines.append(f"  {arch.replace('_', '')}:")
        lines += [f"    {dtype}: {{{items(values)}}}" for dtype, values in by_dtype.items()]
    return lines
