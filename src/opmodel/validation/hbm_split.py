"""Declared training splits of sustained HBM fractions fitted on measured op rows.

A config's sustained calibration may carry ``hbm_fraction``, the share of the datasheet DRAM
bandwidth its board sustains (opmodel.hardware.sustained_calibration). Where a published stream
benchmark of the board exists, the fraction comes from it (``scripts/fit_published_sustained.py``).
Where none describes the measured board, it is fitted on measured kernels that do nothing but
stream DRAM, on a split declared here: one source's rows of one elementwise kernel on one GPU,
of the models whose labels start with a given prefix, moving at least a given number of bytes
(launch and latency then weigh little). The split lives in one place so that the fit and
``validate-ops``, which reports those rows apart as training rows, agree on it.

- ``a40``: Vidur's ATen residual adds of Llama-2-7B on its A40 (``meta-llama/Llama-2-7b-hf``),
  64 MB moved or more. On that board ATen's add and GELU, vLLM's SiLU-and-mul and RoPE and
  cuBLAS's GEMVs all level off at 540-590 GB/s, 0.78-0.85 of the datasheet's 696
  (docs/validation.md, "The A40's sustained DRAM bandwidth").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.op import LocalOp
from opmodel.core.views import ElementwiseView

__all__ = ["HBM_FRACTION_SPLITS", "HbmFractionSplit", "MeasuredRow", "is_hbm_fraction_training_row"]


class MeasuredRow(Protocol):
    """What a split reads of a measured op row (``opmodel.validation.op_rows.OpRow``)."""

    @property
    def hardware(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def implementation(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def op(self) -> LocalOp: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class HbmFractionSplit:
    """The measured op rows one hardware's HBM fraction is fitted on."""

    hardware: str
    source: str
    implementation: str
    function: str  # the elementwise function (``ElementwiseView.function``)
    label_prefix: str
    min_bytes: int  # bytes read and written, summed over the op's tensors

    @property
    def description(self) -> str:
        """One line naming the split, for reports and calibration files."""
        return (
            f"{self.source} rows of {self.implementation} {self.function} on {self.hardware} "
            f"labelled {self.label_prefix}*, >= {self.min_bytes / 1e6:g} MB moved"
        )

    def contains(self, row: MeasuredRow) -> bool:
        """True for a measured row of this split."""
        if (row.hardware, row.source, row.implementation) != (
            self.hardware,
            self.source,
            self.implementation,
        ) or not row.label.startswith(self.label_prefix):
            return False
        view = row.op.view
        return (
            isinstance(view, ElementwiseView)
            and view.function == self.function
            and sum(t.nbytes for t in row.op.tensors) >= self.min_bytes
        )


HBM_FRACTION_SPLITS: Mapping[str, HbmFractionSplit] = FrozenDict(
    {
        "a40": HbmFractionSplit(
            hardware="a40",
            source="vidur",
            implementation="pytorch",
            function="add",
            label_prefix="meta-llama/Llama-2-7b-hf:",
            min_bytes=64 * 10**6,
        ),
    }
)


def is_hbm_fraction_training_row(row: MeasuredRow) -> bool:
    """True for a row some config's HBM fraction was fitted on (:data:`HBM_FRACTION_SPLITS`)."""
    split = HBM_FRACTION_SPLITS.get(row.hardware)
    return split is not None and split.contains(row)
