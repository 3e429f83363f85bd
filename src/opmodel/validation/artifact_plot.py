"""SVG plots of ``validate-artifact`` results (matplotlib, an optional dependency: ``[plots]``).

Workload mode: predicted / measured latency (top row) and energy (bottom row) per forward pass
against the pass's bf16 working set (bytes of every op's tensors), one column per model family,
hardware by colour; a dashed line marks a perfect prediction. Per-op mode: the same with one
column per op type, plus normalised bar plots (predicted / measured latency and energy per
row) of the square-GEMM and softmax subsets next to the plot: ``<name>_square_gemm.svg`` and
``<name>_softmax.svg``. Both modes also write ``<name>_energy_breakdown.svg``: each group's
predicted energy split by cause (tensor, vector, memory levels, active and idle or static
power), normalised to 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from opmodel.core.errors import ConfigError
from opmodel.validation.artifact import WorkloadResult
from opmodel.validation.artifact_perop import OpPrediction

__all__ = ["plot_per_op", "plot_workloads"]

_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def _pyplot() -> Any:
    try:
        import matplotlib  # noqa: PLC0415 - optional dependency

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        msg = "--output-plot needs matplotlib: pip install 'opmodel[plots]'"
        raise ConfigError([msg]) from None
    return plt


def plot_workloads(path: Path, results: list[WorkloadResult]) -> None:
    """Write the workload scatter plot to ``path`` (SVG)."""
    if path.suffix.lower() != ".svg":
        raise ConfigError([f"{path}: --output-plot must be an .svg file"])
    records = [
        _Point(
            r.run.family,
            r.run.label,
            float(r.working_set_bytes),
            r.time_s / r.run.time_s,
            r.energy_j / r.run.energy_j,
        )
        for r in results
    ]
    _scatter_columns(path, records, "bf16 working set per pass [B]")
    parts: dict[str, dict[str, float]] = {}
    for r in results:
        group = parts.setdefault(f"{r.run.label}\n{r.run.family}", {})
        idle = r.energy_j - sum(r.terms_j.values())
        for name, joules in (*r.terms_j.items(), ("idle", idle)):
            group[name] = group.get(name, 0.0) + joules
    _breakdown(_beside(path, "energy_breakdown"), parts)


def _beside(path: Path, suffix: str) -> Path:
    return path.with_name(f"{path.stem}_{suffix}.svg")


def _breakdown(path: Path, parts: dict[str, dict[str, float]]) -> None:
    """Stacked bars: each group's predicted energy split by cause, normalised to 1."""
    plt = _pyplot()
    groups = sorted(parts)
    names = sorted({name for group in parts.values() for name in group})
    figure, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(groups) + 2), 4.0))
    bottoms = [0.0] * len(groups)
    for name in names:
        shares = [parts[g].get(name, 0.0) / (sum(parts[g].values()) or 1.0) for g in groups]
        ax.bar(range(len(groups)), shares, bottom=bottoms, label=name)
        bottoms = [b + v for b, v in zip(bottoms, shares, strict=True)]
    ax.set_xticks(list(range(len(groups))))
    ax.set_xticklabels(groups, rotation=90, fontsize=6)
    ax.set_ylabel("share of predicted energy")
    ax.set_title("predicted energy by cause", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    figure.tight_layout()
    figure.savefig(path, format="svg")
    plt.close(figure)


class _Point(NamedTuple):
    """One marker: its panel column, hardware (colour), x and the two ratios."""

    column: str
    hardware: str
    x: float
    latency_ratio: float
    energy_ratio: float


def _scatter_columns(path: Path, records: list[_Point], xlabel: str) -> None:
    """Two rows (latency, energy) of scatter panels, one column per ``record.column``."""
    columns = sorted({p.column for p in records})
    plt = _pyplot()
    hardware = sorted({p.hardware for p in records})
    colour = {name: _COLOURS[i % len(_COLOURS)] for i, name in enumerate(hardware)}
    figure, axes = plt.subplots(
        2, len(columns), figsize=(3.2 * len(columns), 6.4), squeeze=False, sharey="row"
    )
    for column, name in enumerate(columns):
        for row, label in enumerate(("latency", "energy")):
            ax = axes[row][column]
            for hw in hardware:
                mine = [p for p in records if p.column == name and p.hardware == hw]
                ys = [p.latency_ratio if row == 0 else p.energy_ratio for p in mine]
                ax.scatter([p.x for p in mine], ys, s=14, color=colour[hw], label=hw)
            ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
            ax.set_xscale("log")
            ax.set_title(f"{name}: {label}", fontsize=9)
            if column == 0:
                ax.set_ylabel(f"predicted / measured {label}")
            if row == 1:
                ax.set_xlabel(xlabel)
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="svg")
    plt.close(figure)


def _bars(path: Path, title: str, predictions: list[OpPrediction]) -> None:
    plt = _pyplot()
    figure, ax = plt.subplots(figsize=(max(4.0, 0.35 * len(predictions) + 2), 3.6))
    positions = range(len(predictions))
    width = 0.4
    ax.bar(
        [x - width / 2 for x in positions],
        [p.time_s / p.measured.time_s for p in predictions],
        width,
        label="latency",
    )
    ax.bar(
        [x + width / 2 for x in positions],
        [p.energy_j / p.measured.energy_j for p in predictions],
        width,
        label="energy",
    )
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xticks(list(positions))
    ax.set_xticklabels(
        [f"{p.measured.hardware}\n{_shape(p)}" for p in predictions], rotation=90, fontsize=6
    )
    ax.set_ylabel("predicted / measured")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="svg")
    plt.close(figure)


def _shape(prediction: OpPrediction) -> str:
    return "x".join(str(d) for d in prediction.measured.op.tensors[0].shape)


def _square(prediction: OpPrediction) -> bool:
    if prediction.measured.op_type != "gemm":
        return False
    (m, k), (_, n) = (t.shape[-2:] for t in prediction.measured.op.tensors[:2])
    return m == n == k


def plot_per_op(path: Path, predictions: list[OpPrediction]) -> None:
    """Per-op scatter plot at ``path`` and the square-GEMM and softmax bar plots beside it."""
    if path.suffix.lower() != ".svg":
        raise ConfigError([f"{path}: --output-plot must be an .svg file"])
    records = [
        _Point(
            p.measured.op_type,
            p.measured.hardware,
            float(p.working_set_bytes),
            p.time_s / p.measured.time_s,
            p.energy_j / p.measured.energy_j,
        )
        for p in predictions
    ]
    _scatter_columns(path, records, "bf16 working set [B]")
    for suffix, title, chosen in (
        ("square_gemm", "square GEMMs (M = N = K)", [p for p in predictions if _square(p)]),
        ("softmax", "softmax", [p for p in predictions if p.measured.op_type == "softmax"]),
    ):
        if chosen:
            _bars(_beside(path, suffix), title, chosen)
    parts: dict[str, dict[str, float]] = {}
    for p in predictions:
        group = parts.setdefault(f"{p.measured.hardware}\n{p.measured.op_type}", {})
        for name, joules in p.parts_j.items():
            group[name] = group.get(name, 0.0) + joules
    _breakdown(_beside(path, "energy_breakdown"), parts)
