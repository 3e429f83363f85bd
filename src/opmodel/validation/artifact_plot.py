"""SVG plots of ``validate-artifact`` results (matplotlib, an optional dependency: ``[plots]``).

Workload mode: predicted / measured latency (top row) and energy (bottom row) per forward pass
against the pass's bf16 working set (bytes of every op's tensors), one column per model family,
hardware by colour; a dashed line marks a perfect prediction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opmodel.core.errors import ConfigError
from opmodel.validation.artifact import WorkloadResult

__all__ = ["plot_workloads"]

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


def _ratio(result: WorkloadResult, quantity: str) -> float:
    if quantity == "latency":
        return result.time_s / result.run.time_s
    return result.energy_j / result.run.energy_j


def plot_workloads(path: Path, results: list[WorkloadResult]) -> None:
    """Write the workload scatter plot to ``path`` (SVG)."""
    if path.suffix.lower() != ".svg":
        raise ConfigError([f"{path}: --output-plot must be an .svg file"])
    plt = _pyplot()
    families = sorted({r.run.family for r in results})
    hardware = sorted({r.run.hardware for r in results})
    colour = {name: _COLOURS[i % len(_COLOURS)] for i, name in enumerate(hardware)}
    figure, axes = plt.subplots(
        2, len(families), figsize=(3.2 * len(families), 6.4), squeeze=False, sharey="row"
    )
    for column, family in enumerate(families):
        chosen = [r for r in results if r.run.family == family]
        for row, label in enumerate(("latency", "energy")):
            ax = axes[row][column]
            for name in hardware:
                mine = [r for r in chosen if r.run.hardware == name]
                ax.scatter(
                    [r.working_set_bytes for r in mine],
                    [_ratio(r, label) for r in mine],
                    s=14,
                    color=colour[name],
                    label=name,
                )
            ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
            ax.set_xscale("log")
            ax.set_title(f"{family}: {label}", fontsize=9)
            if column == 0:
                ax.set_ylabel(f"predicted / measured {label}")
            if row == 1:
                ax.set_xlabel("bf16 working set per pass [B]")
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="svg")
    plt.close(figure)
