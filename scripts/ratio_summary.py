"""The summary the published-throughput comparisons print: count, MAPE and geometric mean of
predicted / published ratios (``python scripts/<name>.py`` puts this folder on ``sys.path``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


class HasRatio(Protocol):
    """A compared row: predicted over published."""

    @property
    def ratio(self) -> float: ...


class TimedRow(HasRatio, Protocol):
    """A compared row with its published and predicted seconds and the model's kernel."""

    @property
    def measured_s(self) -> float: ...

    @property
    def model_s(self) -> float: ...

    @property
    def kernel(self) -> str: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Timed:
    """A published time and the model's; the comparisons' rows add what they describe as
    keyword fields."""

    measured_s: float
    model_s: float

    @property
    def ratio(self) -> float:
        """Model over measured."""
        return self.model_s / self.measured_s


@dataclass(frozen=True, slots=True)
class GemmTiming:
    """A published GEMM time (``m x n x k``) and the model's, with the kernel it ran; the
    comparisons' rows add where the time comes from as keyword fields."""

    m: int
    n: int
    k: int
    measured_s: float
    model_s: float
    kernel: str

    @property
    def ratio(self) -> float:
        """Model over measured."""
        return self.model_s / self.measured_s


@dataclass(frozen=True, slots=True)
class TwoKernels:
    """A published time (``size`` its row's sweep value) and the model's two kernels, run one
    after the other."""

    size: int
    measured_s: float
    first_s: float
    second_s: float

    @property
    def model_s(self) -> float:
        """The two kernels' sum."""
        return self.first_s + self.second_s

    @property
    def ratio(self) -> float:
        """Model over measured."""
        return self.model_s / self.measured_s


def timing_columns(row: TimedRow) -> str:
    """``measured us, model us, ratio, kernel`` of a printed row."""
    return f"{row.measured_s * 1e6:11.2f} {row.model_s * 1e6:10.2f} {row.ratio:6.2f}x  {row.kernel}"


def ratio_summary(ratios: Sequence[float]) -> tuple[int, float, float]:
    """(count, MAPE, geometric-mean ratio) of predicted / measured ``ratios``."""
    mape = sum(abs(r - 1) for r in ratios) / len(ratios)
    return len(ratios), mape, math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def row_summary(rows: Sequence[HasRatio]) -> tuple[float, float]:
    """(MAPE, geometric-mean ratio) of ``rows``' ratios."""
    _, mape, geomean = ratio_summary([r.ratio for r in rows])
    return mape, geomean


def print_ratio_groups(groups: Mapping[str, Sequence[float]], width: int) -> None:
    """Print ``group  rows  MAPE  geomean`` for each group of ratios, names ``width`` wide."""
    print(f"\n{'group':<{width}} {'rows':>5}   MAPE  geomean")
    for name, ratios in groups.items():
        count, mape, geomean = ratio_summary(ratios)
        print(f"{name:<{width}} {count:>5} {100 * mape:5.1f} %  {geomean:5.2f}x")


def print_timing_report(
    heading: tuple[str, str],
    labelled: Sequence[tuple[str, TimedRow]],
    groups: Mapping[str, Sequence[float]],
    width: int,
) -> None:
    """Print a comparison: ``heading`` (title line, column header line), each row's label and
    :func:`timing_columns`, then :func:`print_ratio_groups` of ``groups``."""
    title, header = heading
    print(title)
    print(header)
    for label, row in labelled:
        print(label, timing_columns(row))
    print_ratio_groups(groups, width)


def print_two_kernels(heading: tuple[str, str], rows: Sequence[TwoKernels], unit: float) -> None:
    """Print ``heading`` (title line, column header line), each row's size, published and
    predicted time (seconds x ``unit``: 1e3 for ms, 1e6 for µs), ratio and the two kernels'
    times, then the rows' MAPE and geometric mean."""
    print(heading[0])
    print(heading[1])
    for r in rows:
        times = (r.measured_s, r.model_s, r.first_s, r.second_s)
        published, model, first, second = (t * unit for t in times)
        print(
            f"{r.size:>9} {published:12.2f} {model:9.2f} {r.ratio:5.2f}x {first:8.2f} {second:8.2f}"
        )
    print_ratio_groups({"all": [r.ratio for r in rows]}, 4)
