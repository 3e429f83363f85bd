"""BF16 grouped (mixture-of-experts) GEMMs against the published PyTorch ``torch._grouped_mm``
timings found: the first bf16 grouped GEMMs this project checks (DeepGEMM's, in
``compare_published_deepgemm.py``, are FP8).

Usage: python scripts/compare_published_grouped_bf16.py

Sources (nothing here is fitted; every number is a model prediction against a published one):

- torchao pull request #2490 (danielvegamyhre, 2025-07-03, "[moe training] add benchmarking
  script for grouped mm"), ``benchmarks/float8/bench_grouped_mm.py`` on a GPU it names
  "NVIDIA H100" (torchao's spec table gives that name the SXM's 989 TFLOPS of bf16, so the
  rows run on ``h100_sxm``): ``torch._grouped_mm(A, B, offs)`` with ``A`` ``[M, K]``, ``B``
  ``[E, K, N]`` (row-major, not transposed) and the printed ``offs``, the routed experts of
  Llama 4 Scout (17B x 16 experts). Its ``tops`` column counts ``2 M N K E``, as if every
  expert took every token, so its throughput and percentage of peak are 16 times too high;
  its seconds are the kernel's (the script's ``use_gpu_kernel_time``: the profiler's device
  time, as in ``bench_matmul.py``). PyTorch runs a CUTLASS 3 grouped kernel there
  (aten/src/ATen/native/cuda/GroupMM.cu).
- PyTorch pull request #156203 (AaronWang04, 2025-06-17, "[CUTLASS] [CUDA] SM100 GroupMM"),
  its H200 figures: ``torch._grouped_mm`` of two 3-D tensors (a batched GEMM: ``a``
  ``[batch, M, K]``, ``b`` ``[batch, N, K]``), CUDA events around 50 back-to-back calls
  after 5 warm-up ones, per call. Its B200 figures are cut off in the stored copy.

For torchao's shapes PyTorch's GroupMM.cu runs the tile the model selects (128 x 256 x 64,
cooperative, 2 x 1 clusters on sm_90), but as a pointer-array grouped kernel, whose loss
against the same tile in a dense GEMM the model does not represent (PyTorch issue #163425
reports the kernel losing to a loop of cuBLAS calls on H200s); a ratio under 1 is that loss as
much as model error (docs/validation.md, "BF16 grouped GEMMs").
"""

from __future__ import annotations

from dataclasses import dataclass

from ratio_summary import GemmTiming, print_timing_report

from opmodel import ops
from opmodel.core.op import LocalOp
from opmodel.hardware import load_hardware
from opmodel.models import get_model

# torchao #2490: (K, N, the printed offs, kernel seconds) at M = 8,192 routed rows, E = 16
TORCHAO_H100 = (
    (5120, 8192, (272, 832, 1744, 2288, 2768, 3056, 4160, 4352, 4544, 4800, 5056, 5360,
                  6432, 7760, 7872, 8192), 1.31e-3),
    (8192, 5120, (464, 1008, 1664, 2608, 2912, 3296, 3584, 3968, 4960, 5024, 5232, 5952,
                  7440, 7760, 7984, 8192), 1.26e-3),
)  # fmt: skip
# PyTorch #156203, H200: (batch, M, N, K, milliseconds per call)
PYTORCH_H200 = ((16, 128000, 7168, 7168, 298.6668), (128, 1, 2048, 7168, 4.1462))


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(GemmTiming):
    """One published grouped GEMM (``m`` its rows over all groups) and the model's time."""

    source: str
    config: str
    groups: int


def group_sizes(offsets: tuple[int, ...]) -> list[int]:
    """Rows per expert from ``torch._grouped_mm``'s ``offs`` (each group's end row)."""
    starts = (0, *offsets[:-1])
    return [end - start for start, end in zip(starts, offsets, strict=True)]


def _row(where: tuple[str, str], op: LocalOp, mnk: tuple[int, int, int], groups: int,
         measured_s: float) -> Row:  # fmt: skip
    """The model's time for ``op`` on ``where``'s config (``(source, config)``)."""
    source, config = where
    profile = get_model("effective_roofline").predict(op, load_hardware(config))
    kernel = profile.implementation.rpartition("/")[2]
    m, n, k = mnk
    return Row(m, n, k, measured_s, profile.latency_s, kernel, source=source, config=config,
               groups=groups)  # fmt: skip


def compare() -> list[Row]:
    """Every published row against ``effective_roofline`` on its GPU's config."""
    rows = []
    for k, n, offsets, seconds in TORCHAO_H100:
        sizes = group_sizes(offsets)
        op = ops.grouped_gemm(sizes, n, k, "bf16")
        where = ("torchao #2490", "h100_sxm")
        rows.append(_row(where, op, (sum(sizes), n, k), len(sizes), seconds))
    for batch, m, n, k, ms in PYTORCH_H200:
        op = ops.batched_gemm(batch, m, n, k, "bf16", transpose_b=True)
        where = ("pytorch #156203", "h200_sxm")
        rows.append(_row(where, op, (batch * m, n, k), batch, ms * 1e-3))
    return rows


def groups(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows by source, and the rows of at least 16 rows per group (compute-bound) together."""
    found: dict[str, list[Row]] = {}
    for row in rows:
        found.setdefault(f"{row.source} ({row.config})", []).append(row)
        if row.m >= 16 * row.groups:
            found.setdefault("compute-bound (>= 16 rows a group)", []).append(row)
    return found


def main() -> int:
    rows = compare()
    heading = (
        "torch._grouped_mm (bf16) against effective_roofline",
        "source            config    groups      M      N      K  measured us   model us  ratio",
    )
    labelled = [
        (f"{r.source:<17} {r.config:<9} {r.groups:>6} {r.m:>6} {r.n:>6} {r.k:>6}", r) for r in rows
    ]
    found = {k: [r.ratio for r in v] for k, v in groups(rows).items()}
    print_timing_report(heading, labelled, found, 36)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
