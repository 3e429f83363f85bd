"""The result of a prediction: :class:`OpProfile` and its frozen parts.

Totals are properties computed from their parts, never stored beside them, so the energy
breakdown always sums exactly to ``energy_j`` and traffic totals to their reads plus writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from opmodel.core.enums import Engine, TensorRole
from opmodel.core.jsonify import to_jsonable
from opmodel.core.values import FastValue, value_type

__all__ = ["EnergyBreakdown", "Footprint", "LevelTraffic", "OpProfile", "footprint_of"]


@value_type
class LevelTraffic(FastValue):
    """Bytes read from and written to one memory level."""

    json_properties: ClassVar[tuple[str, ...]] = ("total_bytes",)
    read_bytes: int
    write_bytes: int

    @property
    def total_bytes(self) -> int:
        """Read plus written bytes."""
        return self.read_bytes + self.write_bytes


@value_type
class Footprint(FastValue):
    """Global-memory bytes an op's tensors occupy, by role."""

    json_properties: ClassVar[tuple[str, ...]] = ("total_bytes",)
    input_bytes: int
    weight_bytes: int
    output_bytes: int
    grad_bytes: int
    workspace_bytes: int

    def less_input(self, nbytes: int) -> Footprint:
        """This footprint with ``nbytes`` fewer input bytes (an input that aliases another)."""
        return Footprint(
            input_bytes=self.input_bytes - nbytes,
            weight_bytes=self.weight_bytes,
            output_bytes=self.output_bytes,
            grad_bytes=self.grad_bytes,
            workspace_bytes=self.workspace_bytes,
        )

    @property
    def total_bytes(self) -> int:
        """All roles together."""
        return (
            self.input_bytes
            + self.weight_bytes
            + self.output_bytes
            + self.grad_bytes
            + self.workspace_bytes
        )


_ROLES = tuple(TensorRole)  # iterating an Enum class is slow; this runs per LocalOp


def footprint_of(tensors: tuple[Any, ...]) -> Footprint:
    """Sum ``nbytes`` of ``tensors`` (TensorSpec) by role."""
    by_role = dict.fromkeys(_ROLES, 0)
    for tensor in tensors:
        by_role[tensor.role] += tensor.nbytes
    return Footprint(
        input_bytes=by_role[TensorRole.INPUT],
        weight_bytes=by_role[TensorRole.WEIGHT],
        output_bytes=by_role[TensorRole.OUTPUT],
        grad_bytes=by_role[TensorRole.GRAD],
        workspace_bytes=by_role[TensorRole.WORKSPACE],
    )


@value_type
class EnergyBreakdown(FastValue):
    """Energy by cause: engines' arithmetic, each memory level's traffic, and static power."""

    json_properties: ClassVar[tuple[str, ...]] = ("compute_j", "total_j")
    tensor_j: float
    vector_j: float
    memory_j: Mapping[str, float]
    static_j: float

    @property
    def compute_j(self) -> float:
        """Tensor plus vector engine energy."""
        return self.tensor_j + self.vector_j

    @property
    def total_j(self) -> float:
        """Sum of every part."""
        return self.tensor_j + self.vector_j + sum(self.memory_j.values()) + self.static_j


@value_type
class OpProfile(FastValue):
    """How one op performs on one device, as predicted by one model.

    ``implementation`` names the model and the implementation it modelled, ``model/detail``
    (for example ``roofline/tensor``).

    ``latency_s`` is device time (no host launch gap). ``traffic`` holds the memory levels the
    model represents; a level the model does not model is absent rather than zero.
    ``diagnostics`` is the model's own frozen dataclass explaining the number. A latency that
    is negative, infinite or NaN raises ArithmeticError at construction; energy parts are
    products of non-negative counts and validated non-negative coefficients, and the
    conformance tests check every model's energy the same way.
    """

    json_properties: ClassVar[tuple[str, ...]] = ("energy_j",)
    latency_s: float
    flops: int
    engine: Engine
    footprint: Footprint
    traffic: Mapping[str, LevelTraffic]
    energy: EnergyBreakdown
    implementation: str
    diagnostics: Any

    def __post_init__(self) -> None:
        latency = self.latency_s
        if not 0.0 <= latency < math.inf:  # also rejects NaN
            msg = f"'{self.implementation}' produced latency_s={latency!r}; this is a bug"
            raise ArithmeticError(msg)

    @property
    def energy_j(self) -> float:
        """Total energy, equal to the sum of the breakdown."""
        return self.energy.total_j

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (enums as strings, totals included)."""
        result = to_jsonable(self)
        assert isinstance(result, dict)
        return result
