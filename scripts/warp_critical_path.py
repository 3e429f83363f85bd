"""Replay one warp's path through a kernel with the compiler's own schedule, from its SASS.

Usage:
    python scripts/warp_critical_path.py --library torch/lib/libtorch_cuda.so \
        --kernel 'softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11, false, false' \
        [--arch sm_90 ...] [--cuobjdump cuobjdump] [--workdir DIR] [--write FILE]

Tools and inputs as ``scripts/count_aten_sass.py`` (no GPU). Since Volta every instruction
carries control bits in the high word of its 128-bit encoding (bits 105-125): a stall count
(cycles before the next instruction may issue), a yield flag, the scoreboard a variable-latency
instruction sets when it writes (``wb``) or has read its operands (``rb``), and the mask of
scoreboards it waits for. The script walks the path one warp runs (the rules of
``scripts/count_layer_norm_sass.py``: slow paths behind a ``CALL`` skipped, the longer arm of an
if/else) and replays it: an instruction issues after the previous one's stall count and once the
scoreboards it waits for are released; a global load releases its scoreboard ``L`` cycles after
it issues, shared-memory accesses and shuffles after 30, special functions after 18, other
variable-latency instructions after 14 (estimates; they set the dependent work, not the round
trips). The warp's time is linear in ``L`` where it is long: ``T(L) = a + r L``, ``r`` the DRAM
round trips on its critical path and ``a`` the cycles of its own dependent work besides them.
It prints ``r``, ``a`` and the path's length for every kernel whose demangled name holds
``--kernel`` (docs/models/streaming.md, "Loads in flight of the warp softmax").
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from count_layer_norm_sass import walk
from sass_listing import (
    ARCHITECTURES,
    Instruction,
    arch_cubins,
    count_main,
    cuobjdump,
    demangle,
    functions,
)

_LOW = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\*\s*0x[0-9a-f]{16}\s*\*/")
_HIGH = re.compile(r"^\s*/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")
_NONE = 7  # the scoreboard field's "no scoreboard"
_LATENCY = (  # opcode prefix -> cycles until its scoreboard is released (estimates)
    (("LDS", "SHFL", "LDSM", "ATOMS"), 30),
    (("MUFU",), 18),
)
_OTHER_LATENCY = 14  # conversions, S2R, constant loads and the like
_READ_LATENCY = 10  # until a store or shuffle has read its operands
_LONG = (2000.0, 4000.0)  # two long load latencies: T(L) is linear between them


@dataclass(frozen=True)
class Control:
    """The control bits of one instruction (module docstring)."""

    stall: int
    write_barrier: int
    read_barrier: int
    wait_mask: int

    @classmethod
    def decode(cls, high_word: int) -> Control:
        bits = high_word >> 41
        return cls(bits & 15, (bits >> 5) & 7, (bits >> 8) & 7, (bits >> 11) & 63)


def parse_with_control(sass: str) -> list[tuple[Instruction, Control]]:
    """The instructions of one function's ``cuobjdump -sass`` listing with their control bits
    (the hex word on the line after each instruction)."""
    out, pending = [], None
    for line in sass.splitlines():
        low = _LOW.match(line)
        if low:
            pending = Instruction(int(low.group(1), 16), low.group(2))
            continue
        high = _HIGH.match(line)
        if high and pending is not None:
            out.append((pending, Control.decode(int(high.group(1), 16))))
            pending = None
    return out


def _release(opcode: str, load_cycles: float) -> float:
    if opcode.startswith(("LDG", "LD.")):
        return load_cycles
    return next((c for prefixes, c in _LATENCY if opcode.startswith(prefixes)), _OTHER_LATENCY)


def replay(path: Sequence[Instruction], control: dict[int, Control], load_cycles: float) -> float:
    """Cycles one warp takes for ``path`` alone on its SMSP with global loads of
    ``load_cycles`` (module docstring)."""
    ready = [0.0] * 6
    t = 0.0
    for ins in path:
        bits = control[ins.address]
        t = max([t] + [ready[b] for b in range(6) if bits.wait_mask >> b & 1])
        if bits.write_barrier != _NONE:
            done = t + _release(ins.opcode, load_cycles)
            ready[bits.write_barrier] = max(ready[bits.write_barrier], done)
        if bits.read_barrier != _NONE:
            ready[bits.read_barrier] = max(ready[bits.read_barrier], t + _READ_LATENCY)
        t += max(1, bits.stall)
    return max([t, *ready])


def critical_path(listing: str) -> tuple[float, float, int]:
    """(round trips ``r``, other cycles ``a``, instructions) of one warp's path."""
    pairs = parse_with_control(listing)
    code = [ins for ins, _ in pairs]
    control = {ins.address: bits for ins, bits in pairs}
    path, _ = walk(code)
    short, long = (replay(path, control, cycles) for cycles in _LONG)
    trips = (long - short) / (_LONG[1] - _LONG[0])
    return trips, short - trips * _LONG[0], len(path)


def _kernels(kernel: str) -> Callable[[Path, str, str, Path], list[str]]:
    """A counter for :func:`sass_listing.count_main`: one line per kernel whose demangled name
    holds ``kernel``, with its round trips, other cycles and instructions."""

    def counter(library: Path, arch: str, tool: str, workdir: Path) -> list[str]:
        lines = []
        for cubin in arch_cubins(library, arch, tool, workdir):
            listings = functions(cuobjdump(tool, ["-sass", str(cubin)]))
            names = list(listings)
            for name, plain in zip(names, demangle(names), strict=True):
                if kernel in plain:
                    trips, other, length = critical_path(listings[name])
                    lines.append(
                        f"{arch} {plain[:110]}: {trips:g} round trips, {other:.0f} cycles, "
                        f"{length} instructions"
                    )
        return lines

    return counter


def _report(lines: dict[str, list[str]]) -> list[str]:
    return [line for by_arch in lines.values() for line in by_arch]


def _write(path: Path, lines: dict[str, list[str]], library: Path) -> None:
    path.write_text("\n".join([f"# {library.name}", *_report(lines)]) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    kernel = argparse.ArgumentParser(add_help=False)
    kernel.add_argument("--kernel", required=True, help="a substring of the demangled name")
    known, rest = kernel.parse_known_args(argv)
    description = (__doc__ or "").split("\n")[0] + " --kernel: a substring of its demangled name."
    steps = (_kernels(known.kernel), _report, _write)
    return count_main(description, rest, (*ARCHITECTURES, "sm_100"), steps)


if __name__ == "__main__":
    sys.exit(main())
