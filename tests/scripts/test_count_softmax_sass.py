"""scripts/count_softmax_sass.py without CUDA tools: the registers read from a
``cuobjdump -res-usage`` listing, the kernel names it looks for and the shipped file's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.streaming.counted import (
    SOFTMAX_FILE,
    load_register_softmax_counts,
    load_warp_softmax_registers,
)
from tests.scripts.loader import load_script

count = load_script("count_softmax_sass")

_USAGE = """
Resource usage:
 Common:
  GLOBAL:0
 Function _Z3fooPf:
  REG:30 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:540 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z3barPf:
  REG:128 STACK:8 SHARED:1024 LOCAL:0 CONSTANT[0]:540 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def test_registers_by_mangled_name() -> None:
    assert count.registers(_USAGE) == {"_Z3fooPf": 30, "_Z3barPf": 128}


def test_the_kernel_it_looks_for() -> None:
    assert count._kernel_name("bf16", 4) == (
        "cunn_SoftMaxForwardReg<c10::BFloat16, float, c10::BFloat16, "
        "at::native::(anonymous namespace)::SoftMaxForwardEpilogue, long, 4>"
    )


def test_the_warp_softmax_it_looks_for() -> None:
    """The unmasked softmax (not log-softmax) instance, whatever template arguments follow."""
    assert count._warp_name("fp32", 11) == (
        "softmax_warp_forward<float, float, float, 11, false, false"
    )
    kernel = "void softmax_warp_forward<float, float, float, {}, false, {}, 32>(float*)"
    plain = {f"k{log2}": kernel.format(log2, "false") for log2 in range(12)}
    plain["masked"] = kernel.format(1, "true")  # the masked softmax: not this one
    names = ["masked", *plain.keys() - {"masked"}]
    usage = {name: 20 + int(name[1:]) for name in plain if name != "masked"} | {"masked": 99}
    assert count._warp_registers(names, plain, usage, "sm_90", "fp32") == list(range(20, 32))
    del usage["k11"]  # a kernel without its registers: a one-line exit naming it
    with pytest.raises(SystemExit, match="sm_90 fp32: no softmax_warp_forward<float, float, "):
        count._warp_registers(names, plain, usage, "sm_90", "fp32")


def test_the_shipped_counts_are_the_written_form(tmp_path: Path) -> None:
    """What --write produces for the shipped counts reads back to the same tables."""
    shipped = load_register_softmax_counts(SOFTMAX_FILE)
    warp = load_warp_softmax_registers(SOFTMAX_FILE)
    table: dict[str, dict[str, dict[str, list[int]]]] = {}
    for (arch, dtype), values in shipped.items():
        table.setdefault(f"sm_{arch[2:]}", {})[dtype] = {
            "cycles_per_row": [round(v.cycles_per_row) for v in values],
            "registers": [v.registers for v in values],
            "warp_registers": warp[(arch, dtype)],
        }
    written = tmp_path / "counts.yaml"
    count._write(written, table, Path("libtorch_cuda.so"))
    assert load_register_softmax_counts(written) == shipped
    assert load_warp_softmax_registers(written) == warp
