"""Fit the extra fixed overhead of block-scaled FP4 GEMM kernels (opmodel.models.gemm.fp4_overhead).

Usage: python scripts/fit_fp4_overhead.py [--write | --output FILE]

Training rows: the NVFP4 GEMMs under 0.1 TFLOP of torchao's B200 table (1024^3, 1536^3,
2048^3, 3072^3; ``compare_published_fp4.training_rows``), timed as kernel time by the profiler
(the convention of the GEMM overhead fit, scripts/fit_gemm_overhead.py), where a kernel's fixed
costs are a large part of its time. Each model predicts them as NVFP4 x NVFP4 -> bf16 GEMMs on
the ``b200`` config without any FP4 overhead; one constant ``c`` in cycles (added at each
kernel's clock ``f``) minimises the squared relative error, non-negative:
``c = max(0, sum(a b) / sum(a^2))`` with ``a = 1 / (f t)`` and ``b = (t - p) / t`` for a row
measured in ``t`` and predicted in ``p``. The value holds for ``sm100`` (the architecture of
the configs that run FP4: b200, gb200). Every other row of ``compare_published_fp4.py`` is held
out (torchao's larger GEMMs and its bf16 column, Azure's GB200, vLLM's and Helion's rows).

It prints the fitted cycles; ``--write`` writes the shipped calibration file, ``--output`` another.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from compare_published_fp4 import training_rows

from opmodel import ops
from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.fp4_overhead import FP4_CALIBRATION_FILE, NO_FP4_EXTRA, fp4_overridden

MODELS = ("effective_roofline", "extended_roofline")
ARCHITECTURE = "sm100"
CONFIG = "b200"
HEADER = """\
# Extra fixed overhead of block-scaled FP4 GEMM kernels (nvfp4, mxfp4) over the GEMM overhead
# of their architecture (opmodel.models.gemm.fp4_overhead): fitted values, not datasheet
# values. Written by `python scripts/fit_fp4_overhead.py --write` (do not edit by hand) on the
# training rows below; every other row of scripts/compare_published_fp4.py is held out
# (docs/validation.md, 'Block-scaled and FP4 GEMMs').
"""


def _clock_hz(diagnostics: object, default: float) -> float:
    """The kernel's SM clock from a profile's diagnostics (effective_roofline's
    ``sm_clock_hz``), else the config's clock."""
    clock = getattr(diagnostics, "sm_clock_hz", None)
    return float(clock) if isinstance(clock, int | float) else default


def fit(model_name: str) -> int:
    """The extra cycles of ``model_name`` on the training rows (non-negative least squares of
    relative errors, closed form)."""
    hardware = load_hardware(CONFIG)
    model = get_model(model_name)
    top = bottom = 0.0
    with fp4_overridden(NO_FP4_EXTRA):
        for size, measured in training_rows():
            op = ops.gemm(size, size, size, "nvfp4", out_dtype="bf16", transpose_b=True)
            profile = model.predict(op, hardware)
            a = 1.0 / (_clock_hz(profile.diagnostics, hardware.compute.clock_hz) * measured)
            top += a * (measured - profile.latency_s) / measured
            bottom += a * a
    return max(0, round(top / bottom))


def document(cycles: dict[str, int]) -> dict[str, object]:
    """The calibration file's content for the fitted ``cycles`` by model."""
    return {
        "fitted_on": {
            "source": "torchao pull request #2427 (2025-06-23), benchmarks/float8/bench_matmul.py "
            "--recipe nvfp4 on an NVIDIA B200: torch._scaled_mm (cuBLASLt) NVFP4 x NVFP4 -> bf16, "
            "profiler kernel time over 5 calls after a warm-up, on the b200 config",
            "split": "its NVFP4 GEMMs under 0.1 TFLOP; held out: its larger ones and its bf16 "
            "column, Azure's GB200 FP4 table, vLLM's and Helion's NVFP4 rows (python "
            "scripts/compare_published_fp4.py)",
            "rows": [f"torchao b200 {n}x{n}x{n} nvfp4" for n, _ in training_rows()],
        },
        "command": "python scripts/fit_fp4_overhead.py --write",
        "extra_cycles": {model: {ARCHITECTURE: value} for model, value in cycles.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--write", action="store_true", help="write the shipped calibration")
    where.add_argument("--output", type=Path, help="write the calibration to this file")
    args = parser.parse_args(argv)
    try:
        cycles = {name: fit(name) for name in MODELS}
    except OpModelError as exc:
        sys.stderr.write(f"fit_fp4_overhead.py: {exc}\n")
        return 2
    for name, value in cycles.items():
        print(f"{name:<20} {ARCHITECTURE}: {value:,} cycles")
    target = FP4_CALIBRATION_FILE if args.write else args.output
    if target is not None:
        text = yaml.safe_dump(document(cycles), sort_keys=False, width=100)
        target.write_text(HEADER + text)
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("fit_fp4_overhead.py", main)
