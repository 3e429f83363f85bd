"""scripts/count_embedding_registers.py: the registers of ATen's embedding-backward kernels
read from a ``cuobjdump -res-usage`` listing, and the counts the model ships."""

from __future__ import annotations

from opmodel.models.streaming.embedding_backward import REGISTERS
from tests.scripts.loader import load_script

_PREFIX = "_ZN2at6native59_GLOBAL__N__791b8af4_26_EmbeddingBackwardKernel_cu_5d1cf09b"
LISTING = "\n".join(
    (
        f" Function {_PREFIX}19compute_grad_weightIN3c108BFloat16ElEEvPKT0_PKT_S7_llS7_:",
        "  REG:32 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:432 TEXTURE:0",
        f" Function {_PREFIX}19compute_grad_weightIflEEvPKT0_PKT_S5_llS5_:",
        "  REG:30 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:432 TEXTURE:0",
        f" Function {_PREFIX}19compute_grad_weightIfiEEvPKT0_PKT_S5_llS5_:",  # int32 indices
        "  REG:36 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:432 TEXTURE:0",
        f" Function {_PREFIX}19compute_grad_weightIdlEEvPKT0_PKT_S5_llS5_:",  # double
        "  REG:40 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:432 TEXTURE:0",
        f" Function {_PREFIX}15sum_and_scatterIN3c104HalfElEEvPKT0_PT_lS7_:",
        "  REG:22 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:456 TEXTURE:0",
        f" Function {_PREFIX}37compute_grad_weight_atomic_accumulateIfflEEvPKT1_PKT_S5_:",
        "  REG:34 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:464 TEXTURE:0",
        " Function _ZN2at6native13other_kernelIflEEvv:",
        "  REG:90 STACK:0",
    )
)


def test_the_most_registers_of_the_int64_float_variants() -> None:
    """float, half and bfloat16 with int64 indices count; int32 indices, double and other
    kernels do not; the atomic kernel is not taken for compute_grad_weight."""
    script = load_script("count_embedding_registers")
    assert script.registers(LISTING) == {
        "compute_grad_weight": 32,
        "sum_and_scatter": 22,
        "compute_grad_weight_atomic_accumulate": 34,
    }


def test_the_shipped_counts_cover_the_kernels_and_architectures() -> None:
    script = load_script("count_embedding_registers")
    assert set(REGISTERS) == set(script.KERNELS)
    for counts in REGISTERS.values():
        assert set(counts) == {"sm80", "sm86", "sm90", "sm100"}
        assert all(16 <= r <= 64 for r in counts.values())
