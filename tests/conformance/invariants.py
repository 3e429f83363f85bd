"""The invariants every profile keeps (tests/conformance/test_models.py's docstring): the
conformance property tests and those that draw ops outside its builders (block-scaled GEMMs,
quantising streaming kernels) check them here."""

from __future__ import annotations

import math

from opmodel import LocalOp, OpProfile
from opmodel.formulas.work import op_work
from opmodel.hardware import HardwareSpec
from opmodel.report import summarize


def _ideal_latency_s(profile: OpProfile, hardware: HardwareSpec, compulsory_bytes: int) -> float:
    """No model may beat every engine at its peak at once, or HBM streaming compulsory bytes."""
    compute = hardware.compute
    all_peaks = max(compute.tensor_flops_per_s.values(), default=0.0) + max(
        compute.vector_flops_per_s.values()
    )
    return max(profile.flops / all_peaks, compulsory_bytes / hardware.hbm.bandwidth_bytes_per_s)


def assert_profile_invariants(op: LocalOp, profile: OpProfile, hardware: HardwareSpec) -> None:
    """Finite, non-negative figures and a positive latency; energy parts summing to the total;
    at least the op's compulsory bytes (block scales included) through HBM, less the warm
    inputs it may read from L2; never faster than the ideal roofline bound; HBM streamed at
    no more than its bandwidth."""
    e = profile.energy
    numbers = [
        profile.latency_s,
        profile.energy_j,
        float(profile.flops),
        *(float(t.read_bytes + t.write_bytes) for t in profile.traffic.values()),
    ]
    assert all(math.isfinite(x) and x >= 0 for x in numbers)
    assert all(x >= 0 for x in (e.tensor_j, e.vector_j, e.static_j, *e.memory_j.values()))
    assert profile.latency_s > 0
    parts = e.tensor_j + e.vector_j + sum(e.memory_j.values()) + e.static_j
    assert math.isclose(profile.energy_j, parts, rel_tol=1e-12)

    work = op_work(op)
    compulsory = work.read_bytes + work.write_bytes
    # inputs a producer left in L2 may be read from there, and the writes of an op after its
    # producer may stay dirty in L2 past its end (charged to it all the same)
    warm = op.warm_input_bytes()
    assert profile.traffic["hbm"].total_bytes >= compulsory - warm
    streamed = work.read_bytes - warm if warm else compulsory
    assert profile.latency_s >= _ideal_latency_s(profile, hardware, streamed) * (1 - 1e-12)

    summary = summarize(op, profile, hardware)  # no model streams HBM above its bandwidth
    assert summary.hbm_fraction is not None and 0 <= summary.hbm_fraction <= 1 + 1e-9
