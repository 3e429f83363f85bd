"""Fit a kernel's start-and-drain cycles on CUDA GPUs (opmodel.models.shared.start_drain).

Usage: python scripts/fit_start_drain.py [--data-dir data] [--output FILE]

Training rows: the measured kernel times in ``data/ops`` from ``--source`` (Vidur) on
``--hardware`` (A100-SXM4-80GB) of the kernels in ``KERNELS``: ATen's residual add and vLLM's
SiLU-and-mul, the two whose arithmetic has no fitted issue cost (the add's is counted from its
SASS, SiLU-and-mul's chain is its loads), so that the span is not traded against one. Each row
is predicted by ``effective_roofline`` with a span of 0; the span of ``c`` SM cycles minimising
``sum(((p + c / f - m) / m)^2)``, ``f`` the row's clock, is
``opmodel.validation.nnls.relative_offset`` (the span adds to every prediction of a one-kernel
op). Vidur's times are whole microseconds, truncated: each
row's ``time_truncation_s`` puts half a microsecond back (opmodel.validation.measured_values).
The same kernels' rows on every other GPU are held out; the script prints their MAPE with a
span of 0 and with the fitted one, and writes the calibration file (default: the shipped
one). Run it before ``scripts/fit_streaming_instructions.py``, which fits the issue costs with
the span in place.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from op_fit_args import op_fit_parser

from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.clocking import boosted
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.shared.start_drain import (
    CALIBRATION_FILE,
    StartDrainCalibration,
    overridden,
)
from opmodel.models.streaming.issue import issue_key
from opmodel.validation.nnls import relative_offset
from opmodel.validation.op_latency import OpRow, load_op_rows

KERNELS = (("pytorch", "add"), ("vllm", "silu_and_mul"))


def _predicted(
    rows: Sequence[OpRow], specs: dict[str, HardwareSpec], span: StartDrainCalibration
) -> list[float]:
    with overridden(span):
        return [predict_streaming(r.op, specs[r.hardware]).latency_s for r in rows]


def _clock_hz(spec: HardwareSpec) -> float:
    """The clock a streaming kernel runs at: the boost clock of an unlocked device."""
    return boosted(spec).compute.clock_hz


def _mape(
    predicted: Sequence[float],
    rows: Sequence[OpRow],
    specs: dict[str, HardwareSpec],
    cycles: float,
) -> float:
    return statistics.fmean(
        abs((p + cycles / _clock_hz(specs[r.hardware])) / r.time_s - 1)
        for p, r in zip(predicted, rows, strict=True)
    )


def _write(path: Path, span: StartDrainCalibration, count: int) -> None:
    kernels = sorted("/".join(k) for k in span.kernels)
    lines = [
        "# Start and drain of a streaming or attention kernel on a CUDA GPU, SM cycles",
        "# (opmodel.models.shared.start_drain): a calibration, not a datasheet value.",
        "# Written by `python scripts/fit_start_drain.py` from the",
        f"# {span.source} rows on {span.hardware} of the kernels below ({count} rows of",
        "# data/ops, their whole-microsecond times with half a microsecond put back);",
        "# every other GPU's and source's rows are held out (docs/validation.md,",
        "# 'Non-GEMM ops'). Other architectures keep their config's",
        "# overhead.fixed_device_overhead_cycles.",
        "fitted_on:",
        f"  hardware: {span.hardware}",
        f"  source: {span.source}",
        "  kernels:",
        *(f"  - {k}" for k in kernels),
        f"start_drain_cycles: {round(span.start_drain_cycles)}",
    ]
    path.write_text("\n".join(lines) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Fit the span, print the MAPEs, write the calibration file."""
    args = op_fit_parser(__doc__, CALIBRATION_FILE, "a100_80gb_sxm", "vidur").parse_args(argv)
    zero = StartDrainCalibration(0.0, args.hardware, args.source, frozenset(KERNELS))
    rows, _skipped = load_op_rows(args.data_dir)
    chosen = [
        r for r in rows if r.clock_hz is None and (r.implementation, issue_key(r.op)) in KERNELS
    ]
    train = [r for r in chosen if zero.is_training_row(r.hardware, r.source, *_key(r))]
    held = [r for r in chosen if not zero.is_training_row(r.hardware, r.source, *_key(r))]
    if not train:
        sys.exit(f"fit_start_drain: no training rows on {args.hardware}")
    specs = {hw: load_hardware(hw) for hw in {r.hardware for r in chosen}}
    p_train, p_held = _predicted(train, specs, zero), _predicted(held, specs, zero)
    clocks = [_clock_hz(specs[r.hardware]) for r in train]
    span = round(relative_offset(p_train, [r.time_s for r in train], clocks))
    fitted = StartDrainCalibration(span, args.hardware, args.source, frozenset(KERNELS))
    held_text = (
        f"{_mape(p_held, held, specs, 0.0):.1%} -> {_mape(p_held, held, specs, span):.1%}"
        if held
        else "-"
    )
    sys.stdout.write(
        f"start and drain {span} cycles: training {len(train)} rows "
        f"{_mape(p_train, train, specs, 0.0):.1%} -> {_mape(p_train, train, specs, span):.1%}; "
        f"held out {len(held)} rows {held_text}\n"
    )
    _write(args.output, fitted, len(train))
    sys.stdout.write(f"wrote {args.output}\n")
    return 0


def _key(row: OpRow) -> tuple[str, str]:
    return row.implementation, issue_key(row.op)


if __name__ == "__main__":
    sys.exit(main())
