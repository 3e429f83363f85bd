"""Instruction issue of streaming kernels: instructions per element, a calibration.

An SM issues one warp instruction per clock on each of its ``smsps_per_sm`` sub-partitions
(one warp scheduler each: NVIDIA's Volta-to-Blackwell architecture whitepapers), i.e.
``smsps_per_sm x warp_size`` lane instructions per clock. A grid-parallel kernel whose threads
run ``I`` instructions per element (conversions, the function's arithmetic, address and loop
work) needs at least

    t_issue = ceil(CTAs / SMs) x elements per CTA x I / (smsps_per_sm x warp_size x clock)

on the busiest SM. :func:`~opmodel.models.streaming.evaluate.evaluate_streaming` takes it as one
more compute bound beside the FLOP and special-function bounds. FLOP counts miss it: ATen's exact
GELU (erf in fp32), ATen's LayerNorm (a Welford update with a reciprocal per element) and vLLM's
rotary embedding (an integer division and modulo for every pair) issue several times more
instructions than they have FLOPs.

``I`` depends on the compiled kernel. Where that kernel's SASS has been counted (ATen's layer
norm and its RMS variant, :func:`~opmodel.models.streaming.counted.counted_layer_norm`), ``I`` is
its counted issue cycles per element plus its per-row instructions spread over the row, times a
fitted ``stall_factor`` (issue cycles per counted cycle: the stalls between dependent
instructions, branch reconvergence and pipe conflicts the count leaves out; 1 where none is
fitted, as for the RMS variant). Elsewhere it is a calibration: the
file ``configs/calibrations/streaming_instructions.yaml`` holds ``I`` per implementation and
function (elementwise) or op kind (row ops), with the rows it was fitted on
(``scripts/fit_streaming_instructions.py``); ``validate-ops`` reports those rows apart. It is
an effective cost, the issue cycles per element of one lane with the stalls between dependent
instructions included, not an instruction count read from SASS. Kernels and functions the file
does not list have no issue bound (``I = 0``), except ATen's elementwise functions, whose
instructions per element are counted from their SASS (:mod:`~opmodel.models.streaming.counted`).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.core.attrs import STREAMING_IMPLEMENTATIONS
from opmodel.core.op import LocalOp
from opmodel.core.views import ElementwiseView
from opmodel.models.shared.calibration_slot import CalibrationSlot
from opmodel.models.streaming.counted import RowKernelCount
from opmodel.parsing.yamlfile import TableWords, read_calibration, read_number_table

__all__ = [
    "CALIBRATION_FILE",
    "IssueCalibration",
    "calibrated_instructions",
    "counted_issue_cost",
    "instructions_per_element",
    "issue_calibration",
    "issue_key",
    "load_issue_calibration",
    "overridden",
    "stall_factor",
]

CALIBRATION_FILE = CALIBRATIONS_DIR / "streaming_instructions.yaml"
_FIELDS = ("fitted_on", "instructions_per_element")  # and optionally stall_factor
_FITTED_ON = ("hardware", "source")


@dataclass(frozen=True, slots=True)
class IssueCalibration:
    """Instructions per element by (implementation, function or kind), stall factors of the
    counted kernels by the same keys, and its training rows: those measured on ``hardware``
    from ``source`` for the listed keys."""

    instructions: Mapping[tuple[str, str], float]
    hardware: str
    source: str
    stall_factors: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def is_training_row(self, hardware: str, source: str, implementation: str, key: str) -> bool:
        """True for a measured row the calibration was fitted on."""
        listed = (implementation, key) in self.instructions or (
            (implementation, key) in self.stall_factors
        )
        return hardware == self.hardware and source == self.source and listed


_WORDS = TableWords(
    "must be a mapping of implementation to functions",
    "implementation",
    "must map functions to counts",
    "a finite number",
)


def _table(raw: Any, path: Path, name: str) -> dict[tuple[str, str], float]:
    return read_number_table(raw, path, name, STREAMING_IMPLEMENTATIONS, _WORDS)


def load_issue_calibration(path: Path) -> IssueCalibration:
    """Read and validate a calibration file (module docstring); errors name the file and field."""
    data, fitted = read_calibration(path, _FIELDS, _FITTED_ON)
    return IssueCalibration(
        instructions=_table(data["instructions_per_element"], path, "instructions_per_element"),
        hardware=fitted["hardware"],
        source=fitted["source"],
        stall_factors=_table(data.get("stall_factor", {}), path, "stall_factor"),
    )


_SLOT: CalibrationSlot[IssueCalibration] = CalibrationSlot(
    lambda: load_issue_calibration(CALIBRATION_FILE)
)


def issue_calibration() -> IssueCalibration:
    """The calibration in force: the shipped file, or one set by :func:`overridden`."""
    return _SLOT.current()


def issue_key(op: LocalOp) -> str:
    """What the calibration lists ``op`` under: its function when it is an elementwise op that
    names one, else its op kind."""
    view = op.view
    if isinstance(view, ElementwiseView) and view.function:
        return view.function
    return op.kind.value


def instructions_per_element(implementation: str, key: str) -> float:
    """``I`` of ``implementation`` for ``key`` (elementwise function or row-op kind); 0 when
    the calibration does not list it."""
    return issue_calibration().instructions.get((implementation, key), 0.0)


def calibrated_instructions(implementation: str, key: str) -> float | None:
    """``I`` of ``implementation`` for ``key`` when the calibration lists it (0 included), else
    ``None``: a listed value replaces ATen's counted one
    (:mod:`~opmodel.models.streaming.counted`)."""
    return issue_calibration().instructions.get((implementation, key))


def stall_factor(implementation: str, key: str) -> float:
    """Issue cycles per counted cycle of ``implementation``'s kernel for ``key``: the
    calibration's value, 1 when it lists none (module docstring)."""
    return issue_calibration().stall_factors.get((implementation, key), 1.0)


def counted_issue_cost(
    count: RowKernelCount,
    threads_per_cta: int,
    issued_elements: int,
    implementation: str,
    key: str,
) -> float:
    """``I`` of a row kernel counted from SASS: ``stall_factor x (cycles_per_element +
    row_instructions x threads_per_cta / issued_elements)``, each thread's once-per-row
    instructions spread over the elements the CTA's issue is counted on (its elements padded
    to whole warps; module docstring)."""
    spread = count.row_instructions * threads_per_cta / issued_elements
    return stall_factor(implementation, key) * (count.cycles_per_element + spread)


def overridden(calibration: IssueCalibration) -> AbstractContextManager[None]:
    """Use ``calibration`` instead of the shipped file (calibration tooling; models memoise
    profiles, so callers predict through uncached entry points inside the block)."""
    return _SLOT.overridden(calibration)
