"""Fit the instructions per element of streaming kernels (opmodel.models.streaming.issue).

Usage: python scripts/fit_streaming_instructions.py [--data-dir data] [--output FILE]

Training rows: the measured kernel times in ``data/ops`` from ``--source`` (Vidur) on
``--hardware`` (A100-SXM4-80GB) of ATen and vLLM kernels (``implementation`` ``pytorch`` or
``vllm``). For each function (elementwise) or op kind (row ops) among them, ``I`` minimises
the sum of squared relative errors of ``effective_roofline`` over that function's training
rows: a grid of 0-400 in steps of 2, then steps of 0.1 around the best (the smallest ``I`` on a
tie). The rows of every other GPU
are held out; the script prints their MAPE without a fitted ``I`` (no issue bound, or for ATen's
elementwise functions the count from their SASS, ``configs/instructions/aten_elementwise.yaml``)
and with the fitted ``I``. It writes
the calibration file (default: the shipped one), which ``validate-ops`` reads to report the
training rows apart. A kernel keeps its ``I`` only when the bound cuts its training MAPE by a
quarter or more (``KEEP``); otherwise it is left out of the file (the model unchanged for it)
and its rows stay held out. ``I`` is an effective cost: issue cycles per
element of one lane, stalls between dependent instructions included, not a count read from
the compiled kernel. Kernels whose cost is counted from their SASS (``COUNTED``: ATen's layer
norm, ``configs/instructions/aten_layer_norm.yaml``) get a stall factor instead, issue cycles
per counted cycle, by the same protocol on a grid of 0-4 in steps of 0.05, then 0.01 (without a
fitted value the factor is 1: the count alone); the file lists it under ``stall_factor``.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from op_fit_args import op_fit_parser

from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming.issue import (
    CALIBRATION_FILE,
    IssueCalibration,
    issue_key,
    overridden,
)
from opmodel.validation.op_latency import OpRow, load_op_rows

IMPLEMENTATIONS = ("pytorch", "vllm")  # ATen and vLLM kernels, whose rows name them
# up to 400: ATen's index_select (the embedding) costs the SM about 2 cycles per element
COARSE = [2.0 * i for i in range(201)]
# a kernel keeps its fitted I only when the bound cuts its training MAPE by a quarter or more;
# a smaller gain means the bound is not what limits the kernel, and a value fitted anyway
# would stand in for some other missing cost
KEEP = 0.75
# kernels whose issue cost is counted from SASS: their stall factor is fitted, not I
COUNTED = {("pytorch", "layernorm")}
COARSE_FACTOR = [0.05 * i for i in range(81)]


def _ratios(
    rows: Sequence[OpRow],
    specs: dict[str, HardwareSpec],
    key: tuple[str, str],
    value: float | None,
) -> list[float]:
    """Predicted over measured time of ``rows`` with ``I = value`` for ``key`` (``None``: no
    fitted value, so what the model has without one: an ATen elementwise function's count
    from its SASS, opmodel.models.streaming.counted, else no issue bound)."""
    listed = {} if value is None else {key: value}
    calibration = (
        IssueCalibration({}, "", "", stall_factors=listed)
        if key in COUNTED
        else IssueCalibration(listed, "", "")
    )
    with overridden(calibration):
        return [predict_streaming(r.op, specs[r.hardware]).latency_s / r.time_s for r in rows]


def _sse(
    rows: Sequence[OpRow], specs: dict[str, HardwareSpec], key: tuple[str, str], value: float
) -> float:
    return sum((x - 1) ** 2 for x in _ratios(rows, specs, key, value))


def fit_key(rows: Sequence[OpRow], specs: dict[str, HardwareSpec], key: tuple[str, str]) -> float:
    """The ``I`` (or a counted kernel's stall factor) minimising the squared relative errors of
    ``rows`` (module docstring)."""
    coarse, step, digits = (COARSE_FACTOR, 0.01, 2) if key in COUNTED else (COARSE, 0.1, 1)
    best = min(coarse, key=lambda v: (_sse(rows, specs, key, v), v))
    fine = [max(0.0, round(best + step * (i - 20), digits)) for i in range(41)]
    return min(fine, key=lambda v: (_sse(rows, specs, key, v), v))


def _mape(
    rows: Sequence[OpRow],
    specs: dict[str, HardwareSpec],
    key: tuple[str, str],
    value: float | None,
) -> float:
    return statistics.fmean(abs(x - 1) for x in _ratios(rows, specs, key, value))


def _write(
    path: Path, fitted: dict[tuple[str, str], float | None], hardware: str, source: str
) -> None:
    kept = {k: v for k, v in fitted.items() if v is not None and k not in COUNTED}
    factors = {k: v for k, v in fitted.items() if v is not None and k in COUNTED}
    lines = [
        "# Instructions per element of streaming kernels (opmodel.models.streaming.issue):",
        "# a calibration, not a datasheet value. Written by",
        "# `python scripts/fit_streaming_instructions.py` from the",
        f"# {source} rows on {hardware} of the kernels below (data/ops); every other",
        "# GPU's and source's rows are held out (docs/validation.md, 'Non-GEMM ops').",
        "# Kernels and functions not listed have no instruction-issue bound, but ATen's",
        "# elementwise functions, which take their count from SASS",
        "# (configs/instructions/aten_elementwise.yaml). stall_factor: issue cycles per",
        "# counted cycle of the kernels counted from SASS (ATen's layer norm,",
        "# configs/instructions/aten_layer_norm.yaml), fitted on the same rows.",
        "fitted_on:",
        f"  hardware: {hardware}",
        f"  source: {source}",
        "instructions_per_element:",
    ]
    lines += _section(kept)
    if factors:
        lines += ["stall_factor:", *_section(factors)]
    path.write_text("\n".join(lines) + "\n")


def _section(values: dict[tuple[str, str], float]) -> list[str]:
    lines = []
    for implementation in sorted({impl for impl, _ in values}):
        lines.append(f"  {implementation}:")
        lines += [f"    {k}: {v}" for (i, k), v in sorted(values.items()) if i == implementation]
    return lines


def _groups(
    rows: list[OpRow], hardware: str, source: str
) -> dict[tuple[str, str], dict[bool, list[OpRow]]]:
    """The rows of each (implementation, function or kind) the calibration can list, split
    into the training rows (measured on ``hardware`` by ``source``) and the rest."""
    groups: dict[tuple[str, str], dict[bool, list[OpRow]]] = defaultdict(
        lambda: {True: [], False: []}
    )
    for row in rows:
        if row.implementation in IMPLEMENTATIONS and row.clock_hz is None:
            training = row.hardware == hardware and row.source == source
            groups[(row.implementation, issue_key(row.op))][training].append(row)
    return groups


def _fit_and_report(
    key: tuple[str, str],
    train: list[OpRow],
    held: list[OpRow],
    specs: dict[str, HardwareSpec],
) -> float | None:
    """Fit ``key``'s cost on ``train``; keep it only when it cuts the training MAPE to
    ``KEEP`` of what it is without a fitted value (else ``None``), and print the training and
    held-out MAPE before and after."""
    value = fit_key(train, specs, key)
    before, after = _mape(train, specs, key, None), _mape(train, specs, key, value)
    kept = after <= KEEP * before
    fitted = value if kept else None
    held_text = (
        f"{_mape(held, specs, key, None):.1%} -> {_mape(held, specs, key, fitted):.1%}"
        if held
        else "-"
    )
    sys.stdout.write(
        f"{'/'.join(key):20} {'factor' if key in COUNTED else 'I'} = {value:5.2f} "
        f"({'kept' if kept else 'left out'})  "
        f"training {len(train):5d} rows {before:.1%} -> {after:.1%}  "
        f"held out {len(held):5d} rows {held_text}\n"
    )
    return fitted


def main(argv: Sequence[str] | None = None) -> int:
    """Fit every listed cost, print the MAPEs, write the calibration file."""
    args = op_fit_parser(__doc__, CALIBRATION_FILE, "a100_80gb_sxm", "vidur").parse_args(argv)
    rows, _skipped = load_op_rows(args.data_dir)
    specs = {hw: load_hardware(hw) for hw in {r.hardware for r in rows}}
    fitted: dict[tuple[str, str], float | None] = {}
    for key, split in sorted(_groups(rows, args.hardware, args.source).items()):
        if split[True]:
            fitted[key] = _fit_and_report(key, split[True], split[False], specs)
    if not fitted:
        sys.exit(
            f"fit_streaming_instructions: no {'/'.join(IMPLEMENTATIONS)} rows on {args.hardware}"
        )
    _write(args.output, fitted, args.hardware, args.source)
    sys.stdout.write(f"wrote {args.output}\n")
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("fit_streaming_instructions", main)
