"""What a prediction's kind has measured against on its device: the held-out error of the
kernel-level models by op kind and hardware config, from the table in
``configs/accuracy/measured_error.json`` (written by ``python
scripts/write_accuracy_table.py`` from ``opmodel validate-gemm-latency`` and ``opmodel
validate-ops``, checked against a rerun by the tests; :mod:`opmodel.validation.accuracy_table`).

The line names the config the rows were measured on: a what-if variant of it, another clock or
another kind of op was not measured (docs/validation.md). GEMM figures are those of the
models as shipped (``--no-calibrate-fixed-overhead``): with the GEMM overheads the package
fits per architecture (:mod:`opmodel.models.gemm.overhead`), on the rows they were not
fitted on (README, "Accuracy").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from opmodel.configs import ACCURACY_DIR
from opmodel.core.backward import kind_label
from opmodel.core.dtypes import DType
from opmodel.core.op import LocalOp
from opmodel.core.views import ElementwiseView
from opmodel.models.gemm.overhead import GEMM_MODELS
from opmodel.models.streaming.aten_broadcast import is_broadcast, is_strided
from opmodel.parsing.textfile import read_json_file

__all__ = ["TABLE_PATH", "Validated", "validated"]

TABLE_PATH = ACCURACY_DIR / "measured_error.json"
_MODELS = GEMM_MODELS  # the table's (the kernel-level models); the roofline is not in it
# types no measured table holds a row of: an op with a tensor of one is quoted as unmeasured
# in it (docs/validation.md, "Block-scaled and FP4 GEMMs", checks them against published rates)
_UNMEASURED_DTYPES = frozenset(
    (DType.MXFP8, DType.FP6, DType.MXFP6, DType.FP4, DType.MXFP4, DType.NVFP4)
)


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str, str], dict[str, Any]]:
    """(model, kind, hardware) -> row of the shipped table."""
    rows = read_json_file(TABLE_PATH)["rows"]
    return {(row["model"], row["kind"], row["hardware"]): row for row in rows}


@dataclass(frozen=True, slots=True)
class Validated:
    """What the table says of an op's kind on a config: its held-out rows (0 when there are
    none), their MAPE and geometric-mean ratio (None without rows)."""

    kind: str
    hardware: str
    rows: int
    mape: float | None
    geomean_ratio: float | None

    def line(self) -> str:
        """``9.3 % MAPE (0.97x) over 22,653 held-out gemm kernels measured on h100_sxm``, or
        that the table has no rows for the kind on the config."""
        if self.mape is None or self.geomean_ratio is None:
            return (
                f"no held-out {self.kind} rows for {self.hardware} in the measured tables "
                "(docs/validation.md lists every check)"
            )
        fitted = "; as shipped" if self.kind == "gemm" else ""
        return (
            f"{100 * self.mape:.1f} % MAPE ({self.geomean_ratio:.2f}x) over {self.rows:,} "
            f"held-out {self.kind} kernels measured on {self.hardware} (docs/validation.md"
            f"{fitted})"
        )


def validated(op: LocalOp, implementation: str, hardware_name: str) -> Validated | None:
    """The table's figures for ``op``'s kind on ``hardware_name`` (other checks, such as
    published throughputs, are in docs/validation.md); None for the models the table does not
    cover (``implementation`` names the model)."""
    model = implementation.partition("/")[0]
    if model not in _MODELS:
        return None
    kind = kind_label(op)  # the validation's group of the op
    unmeasured = sorted({t.dtype.value for t in op.tensors} & _UNMEASURED_DTYPES)
    if unmeasured:
        return Validated(f"{kind} {'/'.join(unmeasured)}", hardware_name, 0, None, None)
    view = op.view
    aten = implementation.endswith("/streaming/pytorch")
    if aten and isinstance(view, ElementwiseView) and (is_broadcast(view) or is_strided(view)):
        # ATen's non-contiguous kernel: no measured table holds one (docs/models/streaming.md)
        shape = "broadcast input" if is_broadcast(view) else "strided input"
        return Validated(f"{kind} ({shape})", hardware_name, 0, None, None)
    row = _table().get((model, kind, hardware_name))
    if row is None:
        return Validated(kind, hardware_name, 0, None, None)
    return Validated(kind, hardware_name, row["count"], row["mape"], row["geomean_ratio"])
