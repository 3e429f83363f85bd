"""FP8 GEMMs and mixture-of-experts grouped GEMMs against DeepGEMM's published H800 table.

Usage: python scripts/compare_published_deepgemm.py

Source: DeepGEMM's README as first released (deepseek-ai/DeepGEMM, February 2025, MIT
License; the section was removed from later versions), "Performance": "all shapes
potentially used in DeepSeek-V3/R1 inference (including both prefilling and decoding, but
without tensor parallelism) on H800 with NVCC 12.8", in TFLOPS, from its tests' kernel times.
The kernels are FP8 E4M3 GEMMs with fine-grained scaling (one fp32 scale per 1 x 128 of the
activations and per 128 x 128 of the weights, applied on the CUDA cores as the K loop goes),
NT layout (``y = x @ W^T``), bf16 output:

- 18 dense GEMMs (M = 64, 128, 4096 on DeepSeek-V3's six projection shapes);
- 4 grouped GEMMs, contiguous layout (the prefill's experts: 4 x 8192 or 8 x 4096 rows);
- 6 grouped GEMMs, masked layout (the decode's experts: 1 x 1024, 2 x 512, 4 x 256 rows),
  which here are grouped GEMMs of those rows.

And the weight-gradient kernels of DeepGEMM pull request #95 (zheanxu, 2025-05-06,
``wgrad_gemm_fp8_fp8_fp32_nt`` and ``k_grouped_wgrad_gemm_fp8_fp8_fp32_nt``: ``D = C + A @ B^T``
accumulated into fp32, K the tokens): the first 9 rows of its dense table (the stored copy
of the description stops there) and 5 rows of its K-grouped (experts') table as issue #107
(kaimo455, 2025-05-28) quotes them in its "PR #95 TFLOPS" column. The pull request does not
name its GPU; the DeepGEMM team's tables are their H800's, as the README's.

The H800 is the H100 SXM's GH100 die, compute and memory, with NVLink and FP64 cut for export
(aiwiki, "NVIDIA H800"), so the rows run on the ``h100_sxm`` config (its FP8 power-limited
clock fitted on Microsoft's Azure runs, not on these). The model counts no bytes for the fp32
scales (0.25 bits an element of A, less of B) and no instructions for their promotion.
Nothing is fitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratio_summary import GemmTiming, print_timing_report

from opmodel import ops
from opmodel.core.op import LocalOp
from opmodel.hardware import load_hardware
from opmodel.models import get_model

CONFIG = "h100_sxm"
# (M, N, K, TFLOPS): "Normal GEMMs for dense models"
DENSE = (
    (64, 2112, 7168, 206), (64, 24576, 1536, 289), (64, 32768, 512, 219),
    (64, 7168, 16384, 336), (64, 4096, 7168, 287), (64, 7168, 2048, 295),
    (128, 2112, 7168, 352), (128, 24576, 1536, 535), (128, 32768, 512, 358),
    (128, 7168, 16384, 645), (128, 4096, 7168, 533), (128, 7168, 2048, 510),
    (4096, 2112, 7168, 1058), (4096, 24576, 1536, 990), (4096, 32768, 512, 590),
    (4096, 7168, 16384, 1358), (4096, 4096, 7168, 1304), (4096, 7168, 2048, 1025),
)  # fmt: skip
# (groups, M per group, N, K, TFLOPS): "Grouped GEMMs for MoE models", contiguous and masked
CONTIGUOUS = (
    (4, 8192, 4096, 7168, 1297), (4, 8192, 7168, 2048, 1099),
    (8, 4096, 4096, 7168, 1288), (8, 4096, 7168, 2048, 1093),
)  # fmt: skip
MASKED = (
    (1, 1024, 4096, 7168, 1233), (1, 1024, 7168, 2048, 925),
    (2, 512, 4096, 7168, 1040), (2, 512, 7168, 2048, 916),
    (4, 256, 4096, 7168, 932), (4, 256, 7168, 2048, 815),
)  # fmt: skip
# (M, N, K, TFLOPS): #95's "Weight gradient GEMMs for dense models", K the tokens
WGRAD = (
    (7168, 2112, 4096, 920), (1536, 24576, 4096, 986), (512, 32768, 4096, 878),
    (16384, 7168, 4096, 994), (7168, 4096, 4096, 942), (2048, 7168, 4096, 920),
    (7168, 2112, 8192, 1052), (1536, 24576, 8192, 1092), (512, 32768, 8192, 1014),
)  # fmt: skip
# (groups, M, N, K per group, TFLOPS): #95's K-grouped weight gradients, as #107 quotes them
K_GROUPED = (
    (4, 7168, 4096, 4096, 939), (4, 2048, 7168, 4096, 900), (4, 7168, 4096, 8192, 1044),
    (4, 2048, 7168, 8192, 1033), (8, 7168, 4096, 4096, 942),
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(GemmTiming):
    """One published GEMM and the model's time for it (``m`` per group for contiguous and
    masked, ``k`` per group for k-grouped)."""

    layout: str  # dense, contiguous, masked, wgrad (dense) or k-grouped
    groups: int


def _op(layout: str, groups: int, mnk: tuple[int, int, int]) -> LocalOp:
    """The model's op of a row: bf16 out, or fp32 accumulated into (``beta_zero`` false) for
    the weight gradients."""
    m, n, k = mnk
    fp8 = "fp8_e4m3"
    if layout == "dense":
        return ops.gemm(m, n, k, fp8, out_dtype="bf16", transpose_b=True)
    if layout == "wgrad":
        return ops.gemm(m, n, k, fp8, out_dtype="fp32", transpose_b=True, beta_zero=False)
    if layout == "k-grouped":
        return ops.grouped_gemm_wgrad([k] * groups, m, n, fp8, out_dtype="fp32", beta_zero=False)
    return ops.grouped_gemm([m] * groups, n, k, fp8, out_dtype="bf16", transpose_b=True)


def _row(layout: str, groups: int, mnk: tuple[int, int, int], tflops: float) -> Row:
    m, n, k = mnk
    op = _op(layout, groups, mnk)
    profile = get_model("effective_roofline").predict(op, load_hardware(CONFIG))
    measured = 2 * groups * m * n * k / (tflops * 1e12)
    kernel = profile.implementation.rpartition("/")[2]
    return Row(m, n, k, measured, profile.latency_s, kernel, layout=layout, groups=groups)


def compare() -> list[Row]:
    """Every published row against ``effective_roofline`` on the H100 SXM config."""
    rows = [_row("dense", 1, (m, n, k), tflops) for m, n, k, tflops in DENSE]
    for layout, table in (("contiguous", CONTIGUOUS), ("masked", MASKED)):
        rows += [_row(layout, g, (m, n, k), tflops) for g, m, n, k, tflops in table]
    rows += [_row("wgrad", 1, (m, n, k), tflops) for m, n, k, tflops in WGRAD]
    rows += [_row("k-grouped", g, (m, n, k), tflops) for g, m, n, k, tflops in K_GROUPED]
    return rows


def groups(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows by layout (dense by M too), and the forward grouped rows together."""
    found: dict[str, list[Row]] = {}
    for row in rows:
        found.setdefault(row.layout, []).append(row)
        if row.layout == "dense":
            found.setdefault(f"dense M = {row.m}", []).append(row)
        elif row.layout in ("contiguous", "masked"):
            found.setdefault("grouped", []).append(row)
    return found


def main() -> int:
    rows = compare()
    heading = (
        f"DeepGEMM's H800 FP8 GEMMs against effective_roofline on {CONFIG}",
        "layout      groups      M      N      K  measured us   model us  ratio",
    )
    labelled = [(f"{r.layout:<11} {r.groups:>6} {r.m:>6} {r.n:>6} {r.k:>6}", r) for r in rows]
    found = {k: [r.ratio for r in v] for k, v in groups(rows).items()}
    print_timing_report(heading, labelled, found, 16)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
