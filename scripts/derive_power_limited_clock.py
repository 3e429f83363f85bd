"""The power-limited SM clock a config's calibrated energy model implies, and a held-out check.

Usage: python scripts/derive_power_limited_clock.py [--hardware a100_40gb_pcie] [--write]
       [--workload-dir data/energaizer]

1. Derivation (``opmodel.validation.power_balance.balance_clock_hz``): the highest 15 MHz bin
   at which ``effective_roofline`` puts a 2.2 TFLOP bf16 GEMM's average power at most at the
   board's TDP, on the device locked at that clock (the energy calibration carried there by the
   core-voltage table, idle power from the idle table), times the GEMM's tensor activity to the
   1/3 (the clock law's ``u = 1`` value). For the A100 40GB PCIe this replaces nothing: before,
   its unlocked config ran that GEMM at 1410 MHz and about 470 W on a 250 W board.
2. Held-out check: the clock sweep's runs (EnergAIzer A100 PCIe, ``a100_40gb_pcie:dvfs``, none
   of them in any fit) from 1140 MHz up, where the board's power limit held the heavier passes
   below the clock the harness locked (NVML: 1126-1286 MHz). Each run is predicted three ways:
   at the clock NVML read (what ``validate-artifact`` does; it needs the measurement), at the
   locked clock with no power limit, and at the locked clock with the derived power-limited
   clock (what a user without the measurement would do). Time and energy MAPE and geometric
   mean ratio per requested clock.

``--write`` writes ``configs/calibrations/<hardware>_sustained.yaml``, which the config names in
``sustained_calibration``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ratio_summary import ratio_summary

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.hardware import load_hardware
from opmodel.hardware.spec import HardwareSpec
from opmodel.hardware.sustained_calibration import SustainedCalibration, sustained_calibration_text
from opmodel.validation.artifact import predict_runs
from opmodel.validation.artifact_runs import WorkloadRun, load_runs
from opmodel.validation.power_balance import balance_clock_hz
from opmodel.validation.power_clock_fit import with_power_limited_clock

REPO = Path(__file__).resolve().parents[1]
CALIBRATIONS = CALIBRATIONS_DIR
FITTED_ON = (
    "derived, not fitted: the clock at which effective_roofline puts a [4096, 8192] x [8192, "
    "32768] bf16 GEMM at the board's tdp_w on the device locked there (energy calibration "
    "a100_40gb_pcie_energaizer_900mhz.yaml carried by the core-voltage table, measured idle "
    "power), times the GEMM's tensor activity to the 1/3 (opmodel.validation.power_balance); "
    "checked on the held-out clock sweep (a100_40gb_pcie:dvfs, 1140-1410 MHz)"
)


def _ratios(values: list[tuple[float, float]], index: int) -> str:
    _, mape, geomean = ratio_summary([v[index] for v in values])
    return f"{100 * mape:5.1f} % {geomean:.3f}"


def _protocols(
    runs: list[WorkloadRun], clock_hz: float
) -> dict[str, Callable[[str, float], HardwareSpec] | None]:
    requested = {run.clock_hz: 1e6 * (run.requested_clock_mhz or 0.0) for run in runs}

    def locked(name: str, measured_hz: float) -> HardwareSpec:
        return load_hardware(name).at_clock(requested[measured_hz])

    def limited(name: str, measured_hz: float) -> HardwareSpec:
        spec = locked(name, measured_hz)
        if clock_hz >= spec.compute.clock_hz:
            return spec
        return with_power_limited_clock(spec, clock_hz)

    return {
        "at the clock NVML read": None,
        "locked clock, no limit": locked,
        f"locked clock, limit {clock_hz / 1e6:.0f} MHz": limited,
    }


def held_out_check(workload_dir: Path, hardware: str, clock_hz: float, from_mhz: float) -> None:
    """Print the clock sweep's time and energy errors under the three protocols."""
    runs = [
        run
        for run in load_runs(workload_dir)[0]
        if run.hardware == hardware and run.sweep and (run.requested_clock_mhz or 0) >= from_mhz
    ]
    if not runs:
        print(f"no clock-sweep runs of {hardware} from {from_mhz:g} MHz")
        return
    # the spec cache of predict_runs is keyed by the measured clock: each must map to one request
    assert len({r.clock_hz for r in runs}) == len(
        {(r.clock_hz, r.requested_clock_mhz) for r in runs}
    )
    print(f"\nheld out: {len(runs)} clock-sweep runs from {from_mhz:g} MHz (time, energy: MAPE gm)")
    for label, spec_of in _protocols(runs, clock_hz).items():
        by_clock: dict[float, list[tuple[float, float]]] = {}
        for result in predict_runs(runs, "effective_roofline", spec_of=spec_of):
            ratio = (result.time_s / result.run.time_s, result.energy_j / result.run.energy_j)
            by_clock.setdefault(result.run.requested_clock_mhz or 0.0, []).append(ratio)
        every = [r for values in by_clock.values() for r in values]
        print(f"  {label:30s} all    n={len(every):3d}  {_ratios(every, 0)}  {_ratios(every, 1)}")
        for mhz in sorted(by_clock):
            values = by_clock[mhz]
            ratios = f"{_ratios(values, 0)}  {_ratios(values, 1)}"
            print(f"  {'':30s} {mhz:4.0f}   n={len(values):3d}  {ratios}")


def _write(hardware: str, clock_hz: float) -> Path:
    path = CALIBRATIONS / f"{hardware}_sustained.yaml"
    calibration = SustainedCalibration(
        hardware=hardware,
        fitted_on=FITTED_ON,
        command=f"python scripts/derive_power_limited_clock.py --hardware {hardware} --write",
        power_limited_clock_hz=clock_hz,
    )
    header = (
        "Derived sustained value, not a datasheet value: written by",
        "`python scripts/derive_power_limited_clock.py --write` (do not edit by hand).",
    )
    path.write_text(sustained_calibration_text(calibration, header))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", default="a100_40gb_pcie")
    parser.add_argument("--workload-dir", default=str(REPO / "data/energaizer"))
    parser.add_argument("--from-mhz", type=float, default=1140.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    spec = load_hardware(args.hardware)
    clock_hz = balance_clock_hz(spec)
    if clock_hz is None:
        print(f"{args.hardware}: the reference GEMM stays within {spec.power.tdp_w:g} W")
        return
    print(f"{args.hardware}: power_limited_clock_hz {clock_hz:.6g} (TDP {spec.power.tdp_w:g} W)")
    if args.write:
        print(f"wrote {_write(args.hardware, clock_hz)}")
    held_out_check(Path(args.workload_dir), args.hardware, clock_hz, args.from_mhz)


if __name__ == "__main__":
    main()
