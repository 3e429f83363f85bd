"""Fit the GEMM models' fixed device overhead per GPU architecture (opmodel.models.gemm.overhead).

Usage: python scripts/fit_gemm_overhead.py [--data-dir data] [--write | --output FILE]

Training rows: the deterministic split of ``validate-gemm-latency`` (up to 8 evenly spaced
``small`` and 8 ``vector_like`` rows per hardware, ``opmodel.validation.gemm_split``) of the GEMM
tables in ``data/gemm`` and ``data/measured``, keeping only rows timed as one kernel in a
stream of kernels: the kernel's own time (profiler and Nsight Compute times, not ``opmodel
measure``'s CUDA events, whose scope adds the front end's work around one launch;
``opmodel.validation.timing_scope``) of back-to-back runs (``power_state`` ``sustained``, not
XLA's ``burst`` rows: each of their kernels runs alone after idle time and takes 1-1.5 µs more
than the same GPU's kernels in a stream, 7,500-8,200 cycles of overhead on H100 and B200
against Vidur's 5,200 on H100). That leaves Vidur's rows (A100, A40, H100); the B200, whose
only rows are XLA's, keeps the config's estimate. Each model predicts
them as ``validate-gemm-latency`` does (each row's config at its clock, the config's sourced
power-limited clock where it ran unlocked) with no fixed overhead at all; per model and
architecture one overhead in cycles minimises the squared relative error of its rows
(non-negative least squares). Every other row of the tables is held out: ``opmodel
validate-gemm-latency --data-dir data --no-calibrate-fixed-overhead`` reports them as shipped.

It prints the fitted cycles; ``--write`` writes the shipped calibration file, ``--output`` another.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from opmodel.core.errors import ConfigError, OpModelError
from opmodel.models import get_model
from opmodel.models.gemm.overhead import CALIBRATION_FILE, GEMM_MODELS
from opmodel.validation.gemm_data import GemmRow, load_gemm_rows
from opmodel.validation.gemm_latency_hardware import RowHardware
from opmodel.validation.gemm_split import fit_overhead_cycles, row_key, row_op, training_rows
from opmodel.validation.timing_scope import timing_scope

ROOT = Path(__file__).resolve().parent.parent
PER_CLASS = 8  # validate-gemm-latency's --training-per-class default
HEADER = """\
# Fixed device overhead of GEMM kernels, per model and GPU architecture
# (opmodel.models.gemm.overhead): fitted values, not datasheet values. Written by
# `python scripts/fit_gemm_overhead.py --write` (do not edit by hand) on the
# training split of validate-gemm-latency, rows timed as kernels in a stream
# (Vidur's A100, A40 and H100 GEMMs); every other
# row of data/gemm and data/measured is held out (docs/validation.md, 'GEMM
# latency'). Architectures not listed keep the config's
# overhead.fixed_device_overhead_cycles.
"""


def _in_a_stream(rows: list[GemmRow]) -> list[GemmRow]:
    """The rows timed as kernels in a stream of kernels: the kernel's own time (not CUDA
    events) of back-to-back runs (``sustained``, not XLA's ``burst`` runs of one kernel after
    idle time)."""
    return [
        r
        for r in rows
        if timing_scope({"source": r.source}) == "kernel" and r.power_state == "sustained"
    ]


def fit(data_dir: Path) -> dict[str, object]:
    """The calibration file's mapping: cycles by model and architecture, and what they were
    fitted on."""
    rows = _in_a_stream(load_gemm_rows(data_dir).rows)
    hardware = RowHardware(None, zero_overhead=True)  # every overhead 0, the fitted one too
    members: dict[str, list[int]] = defaultdict(list)  # by architecture
    names: dict[str, set[str]] = defaultdict(set)
    predicted: dict[str, dict[int, float]] = {m: {} for m in GEMM_MODELS}
    clocks: dict[int, float] = {}
    for i in sorted(training_rows(rows, PER_CLASS)):
        try:
            spec = hardware.for_row(rows[i])
            for model in GEMM_MODELS:
                predicted[model][i] = get_model(model).predict(row_op(rows[i]), spec).latency_s
        except OpModelError:
            continue  # validate-gemm-latency skips it too
        if spec.architecture:
            members[spec.architecture].append(i)
            names[spec.architecture].add(rows[i].hardware)
            clocks[i] = spec.compute.clock_hz
    if not members:
        msg = f"{data_dir}: no small or vector-like GEMM timed as a kernel in a stream to fit on"
        raise ConfigError([msg])
    cycles = {
        model: {
            arch: round(
                fit_overhead_cycles(
                    [predicted[model][i] for i in idx],
                    [rows[i].time_s for i in idx],
                    [clocks[i] for i in idx],
                )
            )
            for arch, idx in sorted(members.items())
        }
        for model in GEMM_MODELS
    }
    counts = ", ".join(f"{arch} {len(idx)}" for arch, idx in sorted(members.items()))
    return {
        "fitted_on": {
            "source": "GEMM rows of data/gemm and data/measured timed as kernels in a stream "
            "(kernel times of back-to-back runs: Vidur); not XLA's burst rows nor opmodel "
            "measure's CUDA-event rows",
            "split": f"validate-gemm-latency's training split, up to {PER_CLASS} small and "
            f"{PER_CLASS} vector_like rows per hardware; rows per architecture: {counts}",
            "hardware": {arch: sorted(names[arch]) for arch in sorted(names)},
            "rows": sorted({row_key(rows[i]) for idx in members.values() for i in idx}),
        },
        "command": "python scripts/fit_gemm_overhead.py --write",
        "fixed_overhead_cycles": cycles,
    }


def main(argv: list[str] | None = None) -> int:
    """Fit, print and (``--write``/``--output``) write the calibration."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT / "data"))
    parser.add_argument("--write", action="store_true", help="write the shipped file")
    parser.add_argument("--output", help="write this file instead")
    args = parser.parse_args(argv)
    try:
        calibration = fit(Path(args.data_dir))
    except OpModelError as exc:
        print(f"fit_gemm_overhead.py: {exc}", file=sys.stderr)
        return 2
    text = HEADER + yaml.safe_dump(calibration, sort_keys=False, width=100)
    print(text, end="")
    output = CALIBRATION_FILE if args.write else (Path(args.output) if args.output else None)
    if output is not None:
        output.write_text(text)
        print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("fit_gemm_overhead.py", main)
