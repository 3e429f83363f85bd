"""Where the forward-pass time error lives: GEMM kernels against memory-bound kernels, per clock.

Usage: python scripts/artifact_error_by_kind.py [--data-dir data/energaizer] [--model M]
       [--host-bound-share 0.5] [--min-runs 4]

``opmodel validate-artifact`` compares whole forward passes, so a pass that comes out 20 %
too fast does not say which kernels are. This script predicts every kernel of every shipped
run (EnergAIzer's A10, A100-PCIe and H100-SXM passes, the A100's clock sweep included) and
splits each pass's predicted kernel time into two parts: ``T``, the tensor-core work (GEMM and
batched GEMM kernels, convolutions as their implicit GEMM), and ``M``, every other kernel
(elementwise, copies, softmax, layer norm: the memory-bound ones). Per hardware, measurement
set and locked clock it then fits the two factors that scale those parts to the measured pass time,

    measured_i ~ a_T T_i + a_M M_i,

by least squares of relative errors (the 2 x 2 normal equations of
``sum((a_T T_i + a_M M_i) / measured_i - 1)^2``). ``a_T = 1.25`` says the GEMM kernels run 25 %
longer than predicted on those passes. Only GPU-bound passes take part: those whose host time
(the fitted time per kernel and per module call, :mod:`opmodel.validation.host_time`, over the
pass) is at most ``--host-bound-share``
of the predicted kernel time, so that the launch queue keeps the GPU busy and the pass time is
the kernels' sum. The fit uses no host time and changes no model: it is a diagnostic for the
calibration and the models (docs/validation.md, "Forward passes: where the time error is").

The two parts must not move together across the passes of a group for the factors to mean
anything: a group whose normal equations are (nearly) singular is left out, and the script
prints the residual error of the two-factor fit beside the model's own. Finer splits (batched
GEMMs apart, softmax apart) are collinear on these passes (eager attention always runs its two
batched GEMMs, its softmax and its casts together) and give factors that are not separable
(a batched-GEMM factor of 3-4 against a negative softmax one), so the script keeps two.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.validation.artifact import WorkloadResult, host_time_of, load_runs, predict_runs
from opmodel.validation.host_time import host_gap_s

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class PassSplit:
    """One measured pass with its predicted kernel time split in two (seconds)."""

    group: str  # hardware, measurement set and clock: the rows one fit takes
    workload: str
    measured_s: float
    tensor_s: float  # GEMM and batched GEMM kernels
    memory_s: float  # every other kernel
    host_s: float  # the launch queue's host time: per kernel and per module call


def split_of(result: WorkloadResult, spec: HardwareSpec) -> PassSplit:
    """The two parts of ``result``'s predicted kernel time (``validate-artifact``'s prediction
    on ``spec``), grouped by hardware, set and the clock the harness locked (the name's freqN:
    the measured average differs by a few MHz between runs of one setting)."""
    run = result.run
    clock = f"{run.requested_clock_mhz or run.clock_hz / 1e6:.0f} MHz"
    group = f"{run.hardware}:{run.sweep}:{clock}" if run.sweep else f"{run.hardware}:{clock}"
    return PassSplit(
        group=group,
        workload=run.workload,
        measured_s=run.time_s,
        tensor_s=result.tensor_kernel_s,
        memory_s=result.kernel_s - result.tensor_kernel_s,
        host_s=result.ops * host_gap_s(host_time_of(spec), run.family, result.ops),
    )


@dataclass(frozen=True, slots=True)
class FactorFit:
    """The two factors of one group and how well they describe it."""

    group: str
    runs: int
    tensor_factor: float
    memory_factor: float
    residual_mape: float  # mean |fitted / measured - 1| with the two factors
    model_mape: float  # mean |predicted kernel sum / measured - 1| (both factors 1)


def fit_factors(rows: Sequence[PassSplit]) -> tuple[float, float] | None:
    """``(a_T, a_M)`` minimising ``sum((a_T T + a_M M) / y - 1)^2`` over ``rows``; None when
    the normal equations are singular (the two parts proportional over the rows)."""
    a = [r.tensor_s / r.measured_s for r in rows]
    b = [r.memory_s / r.measured_s for r in rows]
    saa = sum(x * x for x in a)
    sbb = sum(x * x for x in b)
    sab = sum(x * y for x, y in zip(a, b, strict=True))
    det = saa * sbb - sab * sab
    if det <= 1e-12 * saa * sbb:
        return None
    sa, sb = sum(a), sum(b)
    return (sa * sbb - sb * sab) / det, (sb * saa - sa * sab) / det


def group_fits(rows: Sequence[PassSplit], min_runs: int) -> list[FactorFit]:
    """One :class:`FactorFit` per group with at least ``min_runs`` rows and a solvable fit."""
    groups: dict[str, list[PassSplit]] = defaultdict(list)
    for row in rows:
        groups[row.group].append(row)
    fits = []
    for group, members in sorted(groups.items(), key=lambda kv: _group_order(kv[0])):
        factors = fit_factors(members) if len(members) >= min_runs else None
        if factors is None:
            continue
        a_t, a_m = factors
        fitted = [(a_t * r.tensor_s + a_m * r.memory_s) / r.measured_s for r in members]
        plain = [(r.tensor_s + r.memory_s) / r.measured_s for r in members]
        fits.append(
            FactorFit(
                group=group,
                runs=len(members),
                tensor_factor=a_t,
                memory_factor=a_m,
                residual_mape=statistics.fmean(abs(x - 1) for x in fitted),
                model_mape=statistics.fmean(abs(x - 1) for x in plain),
            )
        )
    return fits


def _group_order(group: str) -> tuple[str, float]:
    """Hardware and set first, then the clock as a number."""
    head, _, clock = group.rpartition(":")
    return head, float(clock.removesuffix(" MHz"))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data" / "energaizer")
    parser.add_argument("--model", default="effective_roofline")
    parser.add_argument(
        "--host-bound-share",
        type=float,
        default=0.5,
        help="keep passes whose host time is at most this share of the kernel time (0-1)",
    )
    parser.add_argument("--min-runs", type=int, default=4, help="smallest group fitted (>= 2)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Print one line per group: runs, the two factors, the fit's and the model's MAPE."""
    args = _parser().parse_args(argv)
    if not 0 < args.host_bound_share <= 1:
        raise SystemExit("--host-bound-share must be in (0, 1]")
    if args.min_runs < 2:
        raise SystemExit("--min-runs must be 2 or more")
    runs, _ = load_runs(args.data_dir)
    specs: dict[tuple[str, float], HardwareSpec] = {}

    def spec_of(hardware: str, clock_hz: float) -> HardwareSpec:
        spec = specs[(hardware, clock_hz)] = load_hardware(hardware).at_clock(clock_hz)
        return spec

    results = predict_runs(runs, args.model, spec_of=spec_of)
    rows = [split_of(r, specs[(r.run.hardware, r.run.clock_hz)]) for r in results]
    rows = [r for r in rows if r.host_s <= args.host_bound_share * (r.tensor_s + r.memory_s)]
    print(f"{len(rows)} GPU-bound passes of {len(runs)} ({args.model})")
    print(f"{'group':32s} {'runs':>4s} {'a_T':>6s} {'a_M':>6s} {'fit':>6s} {'model':>6s}")
    for fit in group_fits(rows, args.min_runs):
        print(
            f"{fit.group:32s} {fit.runs:4d} {fit.tensor_factor:6.2f} {fit.memory_factor:6.2f} "
            f"{fit.residual_mape:6.1%} {fit.model_mape:6.1%}"
        )
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("artifact_error_by_kind", main)
