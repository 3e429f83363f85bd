"""TPU GEMMs against the published on-chip times found: the first TPU kernel times this
project checks (every shipped TPU config is otherwise built from datasheet figures only).

Usage: python scripts/compare_published_tpu.py

The rows and their sources (Helion #2632; Google's accelerator-microbenchmarks Ironwood
readme) are in ``published_tpu_data.py``: JAX bf16 matmuls of square matrices, on-chip times,
on one TPU7x TensorCore (config ``tpu7x``). The shipped config carries one fitted value, its
sustained MXU share (``fit_published_tpu_sustained.py``), fitted on the split the data module
declares (the two GEMMs of at least 1 TFLOP); those rows are printed as training rows and left
out of the held-out groups. The models run on the config as shipped and, for comparison,
without the calibration (the datasheet peak: ``at peak``).
"""

from __future__ import annotations

from dataclasses import dataclass

from published_tpu_data import CONFIG, SOURCES, is_training, published
from ratio_summary import GemmTiming, print_timing_report

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

# (label, model, whether the config keeps its sustained calibration)
MODELS = (
    ("effective_roofline", "effective_roofline", True),
    ("effective at peak", "effective_roofline", False),
    ("roofline", "roofline", True),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(GemmTiming):
    """One published TPU GEMM and one model's time for it."""

    model: str
    source: str
    training: bool


def compare() -> list[Row]:
    """Every published row against each model on the ``tpu7x`` config."""
    shipped = load_hardware(CONFIG)
    peak = load_hardware(CONFIG, overrides={"sustained_calibration": None})
    rows = []
    for source, size, seconds in published():
        training = source == "ai-hypercomputer" and is_training(size)
        for label, name, calibrated in MODELS:
            hardware = shipped if calibrated else peak
            profile = get_model(name).predict(ops.gemm(size, size, size), hardware)
            kernel = profile.implementation.rpartition("/")[2]
            rows.append(Row(size, size, size, seconds, profile.latency_s, kernel, model=label,
                            source=source, training=training))  # fmt: skip
    return rows


def main() -> int:
    rows = compare()
    heading = (
        f"Published TPU7x bf16 matmuls (JAX, on-chip, one core) against the models on {CONFIG}",
        "source            model                   M      N      K  measured us   model us  ratio",
    )
    labelled = [
        (f"{r.source:<17} {r.model:<18} {r.m:>6} {r.n:>6} {r.k:>6}", r)
        for r in rows
        if not r.training
    ]
    groups = {}
    for label, _, _ in MODELS:
        held_out = [r for r in rows if r.model == label and not r.training]
        for source in SOURCES:
            groups[f"{label} {source}"] = [r.ratio for r in held_out if r.source == source]
        groups[f"{label} held out"] = [r.ratio for r in held_out]
        groups[f"{label} training"] = [r.ratio for r in rows if r.model == label and r.training]
    print_timing_report(heading, labelled, groups, 36)
    print("\n(training: the 16384^3 and 32768^3 rows the sustained MXU share is fitted on)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
