"""The rules of a measurement grid's GEMM entries that depend on their dtype and variant:
grouped GEMMs (``torch._grouped_mm``) and FP8 GEMMs (``torch._scaled_mm``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind

if TYPE_CHECKING:
    from opmodel.measure.grid import OpGrid

__all__ = ["fp8_problems", "grouped_problems"]


def grouped_problems(path: str, entry: OpGrid) -> list[str]:
    """Every ``active`` within ``groups`` and ``rows``, and bf16 only (``torch._grouped_mm``)."""
    groups, active, rows = (entry.sizes.get(name, ()) for name in ("groups", "active", "rows"))
    problems = [
        f"{path}.sizes.active: {a} exceeds groups {min(groups)} or rows {min(rows)}"
        for a in active
        if groups and rows and (a > min(groups) or a > min(rows))
    ]
    if any(d is not DType.BF16 for d in entry.dtypes):
        problems.append(f"{path}.dtypes: grouped_gemm is measured in bf16 only (torch._grouped_mm)")
    if entry.trans != ("NN",):  # the default stands for NT
        problems += [
            f"{path}.trans: grouped_gemm takes NT (groups along M) or TN (along K: the weight "
            f"gradient) (got '{t}')"
            for t in entry.trans
            if t not in ("NT", "TN")
        ]
    return problems


def fp8_problems(path: str, entry: OpGrid) -> list[str]:
    """fp8_e4m3 runs ``torch._scaled_mm``: a 2-D GEMM (no backward) whose B is column-major
    (trans NT: B stored ``[n, k]``), with K and N multiples of 16 (cuBLASLt's FP8 rule)."""
    if DType.FP8_E4M3 not in entry.dtypes:
        return []
    if entry.kind is not OpKind.GEMM or any(entry.backward):
        return [f"{path}.dtypes: fp8_e4m3 is measured for forward gemm only (torch._scaled_mm)"]
    problems = [
        f"{path}.trans: fp8_e4m3 takes NT, B column-major as torch._scaled_mm reads it (got '{t}')"
        for t in entry.trans
        if t != "NT"
    ]
    return problems + [
        f"{path}.sizes.{name}[{index}]: fp8_e4m3 needs a multiple of 16 (got {value})"
        for name in ("k", "n")
        for index, value in enumerate(entry.sizes.get(name, ()))
        if value % 16
    ]
