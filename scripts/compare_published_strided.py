"""ATen's non-contiguous elementwise kernel against published times: eager SwiGLU over the two
halves of one buffer (strided views), Liger-Kernel's Megatron benchmark on an H100.

Usage: python scripts/compare_published_strided.py

Source: Liger-Kernel (BSD-2-Clause), benchmark/data/all_benchmark_data.csv at commit
ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c (via ../shared/data/liger_kernel_benchmarks), kernel
``megatron_swiglu``, provider ``torch``, mode ``forward``, "NVIDIA H100 80GB HBM3", Liger
0.8.1, 2026-07-26: benchmark/scripts/benchmark_megatron_swiglu.py times
``F.silu(y_1) * y_2`` over ``y_1, y_2 = torch.chunk(y, 2, -1)`` of a bf16 ``[2048, 4,
2 x ffn_local]`` buffer with Triton's ``do_bench`` (CUDA events, a 256 MiB L2 flush before each
call), the medians copied below. The halves are strided views (each row's ``ffn_local``
elements contiguous, the rows ``2 x ffn_local`` apart), so both kernels take ATen's
non-contiguous path (``elementwise_kernel<128, 4>``): SiLU of the strided first half into a
contiguous tensor, then its product with the strided second half. Each is predicted as an
elementwise op with that input tagged ``strided`` (``ops.elementwise(..., strided_inputs=[i])``),
the flush's dirty lines on the first; the row is their sum. Nothing is fitted. The same run's
``liger`` rows (Liger's fused kernel on the same buffer: the same bytes) are op-table rows of
``validate-ops`` (``liger:fused:elementwise``), the control.
"""

from __future__ import annotations

from ratio_summary import TwoKernels, print_two_kernels

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

CONFIG = "h100_sxm"
TOKENS = (2048, 4)  # S x B
FLUSH_BYTES = 256 * 2**20  # do_bench's cache buffer, zeroed before each call
# ffn_local -> the published median, ms
PUBLISHED_MS = {
    1024: 0.05782400071620941,
    2048: 0.10529599711298943,
    4096: 0.19763199985027313,
    8192: 0.38304001092910767,
    16384: 0.7503359913825989,
    32768: 1.4952960014343262,
}


def compare() -> list[TwoKernels]:
    """Every published row under ``effective_roofline`` on ``CONFIG``."""
    model, hardware = get_model("effective_roofline"), load_hardware(CONFIG)
    rows = []
    for ffn, ms in PUBLISHED_MS.items():
        shape = (*TOKENS, ffn)
        silu = ops.elementwise(
            "silu", shape, strided_inputs=[0], l2_dirty_bytes=FLUSH_BYTES, phase="train_fwd"
        )
        product = ops.elementwise("mul", shape, strided_inputs=[1], phase="train_fwd")
        times = [model.predict(op, hardware).latency_s for op in (silu, product)]
        rows.append(TwoKernels(ffn, ms * 1e-3, times[0], times[1]))
    return rows


def main() -> int:
    title = f"Eager SwiGLU on strided halves (Liger's megatron_swiglu, torch) on {CONFIG}"
    header = f"{'ffn_local':>9} {'published us':>12} {'model us':>9}  ratio  silu us   mul us"
    print_two_kernels((title, header), compare(), 1e6)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_strided", main)
