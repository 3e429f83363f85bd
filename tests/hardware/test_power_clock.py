"""The power-limited clock law: f = min(clock, f_pl x u^(-1/3)) in 15 MHz bins, by hand."""

from __future__ import annotations

import csv
import dataclasses
import re
import statistics
from pathlib import Path
from types import MappingProxyType

import pytest

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.clocking import (
    power_limited,
    power_limited_clock_hz,
    tensor_activity,
    throttled,
)
from opmodel.models import get_model

_GEMM_LABEL = re.compile(r"gemm (bf16|fp16) (?:b=(\d+) )?m=(\d+) n=(\d+) k=(\d+)")


def _limited(clock_hz: float) -> HardwareSpec:
    spec = load_hardware("a100_80gb_sxm")  # rated at 1410 MHz
    compute = dataclasses.replace(spec.compute, power_limited_clock_hz=clock_hz)
    return dataclasses.replace(spec, compute=compute)


def test_full_activity_runs_at_the_power_limited_clock() -> None:
    assert power_limited_clock_hz(_limited(1.065e9), 1.0) == 1.065e9  # 71 bins of 15 MHz


def test_lighter_kernels_climb_as_the_cube_root_of_activity() -> None:
    # u = 0.5: 1065 MHz x 2^(1/3) = 1341.8 MHz -> the 1335 MHz bin below it
    assert power_limited_clock_hz(_limited(1.065e9), 0.5) == pytest.approx(1.335e9)
    # u = 0.125: 1065 x 2 = 2130 MHz, capped at the config's 1410 MHz
    assert power_limited_clock_hz(_limited(1.065e9), 0.125) == 1.41e9


def test_no_limit_or_no_activity_keeps_the_clock() -> None:
    spec = load_hardware("l40s")  # no sourced power-limited clock
    assert spec.compute.power_limited_clock_hz is None
    assert power_limited_clock_hz(spec, 1.0) == spec.compute.clock_hz
    assert power_limited_clock_hz(_limited(1.065e9), 0.0) == 1.41e9


def test_power_limited_spec_is_a_cached_locked_clock() -> None:
    spec = _limited(1.065e9)
    slow = power_limited(spec, 1.2e9)
    assert slow.compute.clock_hz == 1.2e9
    assert slow.compute.power_limited_clock_hz is None  # a spec at a clock is locked there
    assert power_limited(spec, 1.2e9) is slow
    assert power_limited(spec, 1.41e9) is spec
    assert spec.at_clock(1.0e9).compute.power_limited_clock_hz is None


def test_a100_sxm_ships_the_clock_fitted_on_azures_cublaslt_table() -> None:
    """The A100 SXM config carries 1170 MHz from its sustained calibration, fitted on
    Microsoft's published cuBLASLt FP16 throughput ([AZ] in the config;
    scripts/fit_published_sustained.py, tested in tests/scripts); ``at_clock`` locks the clock
    and drops it."""
    spec = load_hardware("a100_80gb_sxm")
    assert spec.compute.power_limited_clock_hz == 1.17e9
    assert power_limited_clock_hz(spec, 1.0) == 1.17e9  # 78 bins of 15 MHz
    # at 0.7 tensor activity: 1170 x 0.7^(-1/3) = 1317.6 MHz, down to the 1305 MHz bin
    assert power_limited_clock_hz(spec, 0.7) == 1.305e9
    assert spec.at_clock(1.2e9).compute.power_limited_clock_hz is None


def test_h200_and_h100_carry_the_clock_measured_under_gemm_load() -> None:
    """1455 MHz: the median SM clock NVML read on an H200 during back-to-back large GEMMs
    (data/measured); the H100 SXM (the same GH100 die at 700 W) cites the same measurement."""
    for name in ("h200_sxm", "h100_sxm"):
        spec = load_hardware(name)
        assert spec.compute.power_limited_clock_hz == 1.455e9
        assert power_limited_clock_hz(spec, 1.0) == 1.455e9
        # at half the tensor activity: 1455 x 2^(1/3) = 1833 MHz, above the 1830 MHz rating
        assert power_limited_clock_hz(spec, 0.5) == 1.83e9


def test_throttled_spec_from_a_kernels_activity() -> None:
    """``tensor_activity`` is issued FLOPs over peak x time (capped at 1); ``throttled`` gives
    the spec at the law's clock, or None when the kernel keeps the clock."""
    spec = _limited(1.065e9)
    peak = spec.compute.tensor_peak(DType.BF16)
    assert peak is not None
    assert tensor_activity(spec, DType.BF16, 0.5 * peak * 1e-3, 1e-3) == pytest.approx(0.5)
    assert tensor_activity(spec, DType.BF16, 2 * peak, 1.0) == 1.0
    assert tensor_activity(spec, DType.BF16, peak, 0.0) == 0.0
    busy = throttled(spec, DType.BF16, peak * 1e-3, 1e-3)
    assert busy is not None and busy.compute.clock_hz == 1.065e9
    assert throttled(spec, DType.BF16, 0.1 * peak * 1e-3, 1e-3) is None  # 2.29 GHz > 1.41 GHz
    free = load_hardware("l40s")
    assert throttled(free, DType.BF16, 1e15, 1e-3) is None  # no power-limited clock


def test_fp8_tensor_work_runs_at_its_own_power_limited_clock() -> None:
    """h100_sxm's sustained calibration gives FP8 tensor work 1305 MHz (fitted on Azure's
    published FP8 cuBLASLt runs); 16-bit work keeps the 1455 MHz measured on the H200, and an
    FP8 variant falls back to the ``fp8`` family's entry. at_clock drops both."""
    spec = load_hardware("h100_sxm")
    assert power_limited_clock_hz(spec, 1.0, DType.FP8_E4M3) == 1.305e9
    assert power_limited_clock_hz(spec, 1.0, DType.FP8_E5M2) == 1.305e9
    assert power_limited_clock_hz(spec, 1.0, DType.BF16) == 1.455e9
    assert power_limited_clock_hz(spec, 1.0) == 1.455e9
    # half the activity: 1305 x 2^(1/3) = 1644.2 MHz, down to the 1635 MHz bin
    assert power_limited_clock_hz(spec, 0.5, DType.FP8) == 1.635e9
    locked = spec.at_clock(1.5e9)
    assert locked.compute.power_limited_clock_for(DType.FP8) is None


def test_fp8_gemm_is_slower_than_with_the_16_bit_clock() -> None:
    """A large FP8 GEMM on H100 runs at the FP8 clock: its latency over the same GEMM with the
    16-bit clock for FP8 is about the clock ratio 1455 / 1305."""
    spec = load_hardware("h100_sxm")
    same = dataclasses.replace(
        spec,
        compute=dataclasses.replace(
            spec.compute, power_limited_clock_hz_by_dtype=MappingProxyType({})
        ),
    )
    fp8 = DType.FP8_E4M3
    op = LocalOp(
        name="g",
        kind=OpKind.GEMM,
        phase=Phase.INFERENCE,
        tensors=(
            TensorSpec(TensorRole.INPUT, (16384, 16384), fp8),
            TensorSpec(TensorRole.WEIGHT, (16384, 16384), fp8),
            TensorSpec(TensorRole.OUTPUT, (16384, 16384), DType.BF16),
        ),
    )
    model = get_model("effective_roofline")
    slow, fast = model.predict(op, spec), model.predict(op, same)
    assert slow.latency_s / fast.latency_s == pytest.approx(1.455 / 1.305, rel=0.03)


def test_in_burst_runs_at_the_clock_measured_on_lone_kernels() -> None:
    """h100_sxm and h200_sxm carry 1595 MHz for kernels that run alone after idle time (the
    median Nsight Compute clock of the large GEMMs in data/measured): ``in_burst`` makes it the
    power-limited clock, scales the FP8 one by the same 1595 / 1455 and keeps the rest; a
    config without a burst clock, or at a locked clock, is returned as it is."""
    for name in ("h200_sxm", "h100_sxm"):
        spec = load_hardware(name)
        burst = spec.in_burst()
        assert spec.compute.power_limited_clock_hz == 1.455e9  # unchanged
        assert burst.compute.power_limited_clock_hz == 1.595e9
        assert burst.compute.clock_hz == spec.compute.clock_hz
        assert power_limited_clock_hz(burst, 1.0) == 1.590e9  # the 15 MHz bin below
        assert burst.in_burst() is burst  # idempotent: its burst clock is its own
        assert spec.in_burst() is burst  # cached
    h100 = load_hardware("h100_sxm").in_burst()
    fp8 = h100.compute.power_limited_clock_for(DType.FP8)
    assert fp8 == pytest.approx(1.305e9 * 1.595 / 1.455)
    b200 = load_hardware("b200")
    assert b200.in_burst() is b200
    locked = load_hardware("h100_sxm").at_clock(1.5e9)
    assert locked.compute.burst_power_limited_clock_hz is None
    assert locked.in_burst() is locked


def test_burst_clock_is_the_median_ncu_clock_of_the_committed_gemms() -> None:
    """The configs' 1595 MHz is recomputed from the committed data: the median of ncu's
    ``sm__cycles_elapsed.avg.per_second`` over the GEMM kernel of every bf16/fp16 case of at
    least 100 GFLOP (the selection the sustained 1455 MHz used)."""
    root = Path(__file__).resolve().parents[2] / "data" / "measured"
    clocks = []
    for folder in ("h200_2026-12-04_ncu_gemm", "h200_2026-12-04_ncu_gemm_rest"):
        with (root / folder / "ncu_kernels.csv").open(newline="") as handle:
            for record in csv.DictReader(handle):
                shape = _GEMM_LABEL.search(record["label"])
                if shape is None or record["position"] != "0":
                    continue
                batch = int(shape.group(2) or 1)
                m, n, k = (int(shape.group(i)) for i in (3, 4, 5))
                if 2 * batch * m * n * k >= 100e9:
                    clocks.append(float(record["sm__cycles_elapsed.avg.per_second"]))
    assert len(clocks) == 201
    assert statistics.median(clocks) == pytest.approx(1.595e9, abs=1e6)
    assert load_hardware("h200_sxm").compute.burst_power_limited_clock_hz == 1.595e9
