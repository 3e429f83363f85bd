"""The invariants every profile keeps, shared by the property tests that draw ops outside the
conformance builders (block-scaled GEMMs, quantising streaming kernels)."""

from __future__ import annotations

import math

from opmodel import LocalOp, OpProfile
from opmodel.formulas.work import op_work
from opmodel.hardware import HardwareSpec


def assert_profile_invariants(op: LocalOp, profile: OpProfile, hardware: HardwareSpec) -> None:
    """Finite and positive latency, energy parts summing to the total, at least the op's
    compulsory bytes (block scales included) through HBM and never faster than streaming them
    at the HBM bandwidth."""
    assert math.isfinite(profile.latency_s) and profile.latency_s > 0
    energy = profile.energy
    parts = energy.tensor_j + energy.vector_j + energy.static_j + sum(energy.memory_j.values())
    assert math.isclose(profile.energy_j, parts, rel_tol=1e-12)
    work = op_work(op)
    compulsory = work.read_bytes + work.write_bytes
    assert profile.traffic["hbm"].total_bytes >= compulsory
    assert profile.latency_s >= compulsory / hardware.hbm.bandwidth_bytes_per_s * (1 - 1e-12)
