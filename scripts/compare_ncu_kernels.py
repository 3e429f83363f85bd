"""Kernel-only accuracy: a model's latency and DRAM bytes against Nsight Compute per case.

Usage: python scripts/compare_ncu_kernels.py [--data-dir data/measured] [--model effective_roofline]
       [--output-csv F]

Reads every ``*/ncu_kernels.csv`` under ``--data-dir`` (written by ``scripts/ncu_cases.py
parse``) with its ``ncu_labels.csv``. A case's op is the one the shipped grids' plan builds for
its label today (``opmodel.measure.plan.Case.op``), so attrs added since the run (such as
``implementation``) apply; a case whose kernel ncu names ``vectorized_elementwise_kernel<8,`` is
marked ``aten_128bit_vectors`` (ATen's 16-byte vectors, opmodel.measure.aten), and an attention
prefill that ran cuDNN's fused kernel (``cudnn_generated_fort_native_sdpa...``) ``cta_order:
in_order``. Each case's
measured time is the sum of its kernels' ``gpu__time_duration.sum`` (no launch gaps, caches
flushed before each kernel), its DRAM bytes the sums of ``dram__bytes_read.sum`` and
``dram__bytes_write.sum``. The model predicts the case's op on the config ``--hardware``
(default h200_sxm) names at the SM clock ncu saw (the duration-weighted mean of
``sm__cycles_elapsed.avg.per_second``). The model's fixed device overhead is the config's; the
host launch overhead is not part of an ncu duration, and the models do not add it to one
kernel's latency. Printed per kind: cases, MAPE, median APE and geometric-mean ratio of
latency, and the median absolute error of DRAM read bytes. Nothing is fitted.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from opmodel.core.enums import OpKind
from opmodel.core.errors import ConfigError
from opmodel.core.model import OpModel
from opmodel.core.op import LocalOp
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.measure.grid import load_grid, shipped_grid_names
from opmodel.measure.plan import Case, expand
from opmodel.models import get_model
from opmodel.parsing.csvfile import read_csv_rows


@dataclass(frozen=True, slots=True)
class KernelCase:
    """One profiled case: what ncu measured and what the model predicts."""

    folder: str
    label: str
    kind: str
    kernels: int
    measured_s: float
    predicted_s: float
    clock_hz: float
    measured_read_bytes: float
    predicted_read_bytes: float

    @property
    def ratio(self) -> float:
        """Predicted over measured latency."""
        return self.predicted_s / self.measured_s


_VEC8 = "vectorized_elementwise_kernel<8,"  # ATen's 128-bit vectorization of a 16-bit dtype
# cuDNN's fused attention, whose scheduler starts the query blocks in launch order
_CUDNN_SDPA = "cudnn_generated_fort_native_sdpa"
_KERNEL_COLUMNS = (
    "index",
    "kernel",
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "sm__cycles_elapsed.avg.per_second",
)


def _known_cases(grids: list[str]) -> dict[str, Case]:
    """Every case of the shipped measure grids and of ``grids`` (paths or names) by label (a
    label names one op)."""
    names = [*shipped_grid_names(), *grids]
    return {c.label: c for name in names for c in expand(load_grid(name))}


def _cases(
    folder: Path, spec: HardwareSpec, model_name: str, known: dict[str, Case]
) -> list[KernelCase]:
    kernels: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in read_csv_rows(folder / "ncu_kernels.csv", _KERNEL_COLUMNS):
        kernels[row["index"]].append(row)
    model = get_model(model_name)
    out = []
    for record in read_csv_rows(folder / "ncu_labels.csv", ("index", "label")):
        rows = kernels.get(record["index"])
        if not rows:
            continue  # a memcpy: no kernel to compare with
        out.append(_case(folder, record, rows, (spec, model), known))
    return out


def _case(
    folder: Path,
    record: dict[str, str],
    rows: list[dict[str, str]],
    setting: tuple[HardwareSpec, OpModel],
    known: dict[str, Case],
) -> KernelCase:
    """One profiled case: its kernels' summed duration and DRAM reads beside the model's
    prediction of the case's op at the duration-weighted clock ncu saw."""
    spec, model = setting
    durations = [float(r["gpu__time_duration.sum"]) * 1e-9 for r in rows]
    measured = sum(durations)
    clocks = [float(r["sm__cycles_elapsed.avg.per_second"]) for r in rows]
    clock = sum(c * d for c, d in zip(clocks, durations, strict=True)) / measured
    profile = model.predict(_case_op(folder, record["label"], rows, known), spec.at_clock(clock))
    hbm = profile.traffic.get("hbm")
    return KernelCase(
        folder=folder.name,
        label=record["label"],
        kind=record["kind"],
        kernels=len(rows),
        measured_s=measured,
        predicted_s=profile.latency_s,
        clock_hz=clock,
        measured_read_bytes=sum(float(r["dram__bytes_read.sum"]) for r in rows),
        predicted_read_bytes=float(hbm.read_bytes) if hbm else math.nan,
    )


def _case_op(
    folder: Path, label: str, rows: list[dict[str, str]], known: dict[str, Case]
) -> LocalOp:
    """The op the shipped grids' plan builds for ``label``, with the attrs the kernels ncu
    named imply: ATen's 16-byte vectors, cuDNN's launch-order attention schedule."""
    case = known.get(label)
    if case is None:
        where = folder / "ncu_labels.csv"
        msg = f"{where}: case {label!r} is in no shipped grid (add yours: --grid)"
        raise ConfigError([msg])
    op = case.op()
    if any(_VEC8 in r["kernel"] for r in rows):
        op = replace(op, attrs={**op.attrs, "aten_128bit_vectors": True})
    if op.kind is OpKind.ATTENTION_PREFILL and any(_CUDNN_SDPA in r["kernel"] for r in rows):
        op = replace(op, attrs={**op.attrs, "cta_order": "in_order"})
    return op


def _summary(cases: list[KernelCase]) -> str:
    apes = [abs(c.ratio - 1) for c in cases]
    geo = math.exp(statistics.fmean(math.log(c.ratio) for c in cases))
    reads = [
        abs(c.predicted_read_bytes / c.measured_read_bytes - 1)
        for c in cases
        if c.measured_read_bytes > 1e6 and not math.isnan(c.predicted_read_bytes)
    ]
    read = f"{statistics.median(reads):7.1%}" if reads else "      -"
    return (
        f"{len(cases):5d} {statistics.fmean(apes):7.1%} {statistics.median(apes):7.1%} "
        f"{geo:7.3f} {read}"
    )


def _print_table(cases: list[KernelCase]) -> None:
    """Cases, MAPE, median APE, geometric-mean ratio and DRAM-read error: all, then per kind,
    and per kind by its kernel count where its cases ran different counts (cuBLAS's split-K
    GEMMs add a reduce kernel: ``gemm: 2 kernels``)."""
    groups: dict[str, list[KernelCase]] = defaultdict(list)
    for case in cases:
        groups[case.kind].append(case)
    print(f"{'group':28s} {'n':>5s} {'MAPE':>7s} {'median':>7s} {'geomean':>7s} {'DRAM rd':>7s}")
    print(f"{'all':28s} {_summary(cases)}")
    for kind in sorted(groups):
        print(f"{kind:28s} {_summary(groups[kind])}")
        counts = sorted({c.kernels for c in groups[kind]})
        for count in counts if len(counts) > 1 else ():
            label = f"{kind}: {count} kernel{'s' if count > 1 else ''}"
            print(f"{label:28s} {_summary([c for c in groups[kind] if c.kernels == count])}")


_CSV_COLUMNS = (
    "folder",
    "label",
    "kind",
    "kernels",
    "measured_s",
    "predicted_s",
    "ratio",
    "clock_hz",
    "measured_dram_read_bytes",
    "predicted_dram_read_bytes",
)


def _write_csv(path: Path, cases: list[KernelCase]) -> None:
    """One row per case (``_CSV_COLUMNS``)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(_CSV_COLUMNS)
        for c in cases:
            writer.writerow(
                [
                    c.folder,
                    c.label,
                    c.kind,
                    c.kernels,
                    c.measured_s,
                    c.predicted_s,
                    c.ratio,
                    c.clock_hz,
                    c.measured_read_bytes,
                    c.predicted_read_bytes,
                ]
            )


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("data/measured"))
    parser.add_argument("--model", default="effective_roofline")
    parser.add_argument("--hardware", default="h200_sxm")
    parser.add_argument("--output-csv", type=Path)
    parser.add_argument(
        "--grid", action="append", default=[], help="a grid file the run used (repeatable)"
    )
    args = parser.parse_args(argv)
    folders = sorted(p.parent for p in args.data_dir.glob("*/ncu_kernels.csv"))
    if not folders:
        raise ConfigError([f"{args.data_dir}: no */ncu_kernels.csv (scripts/ncu_cases.py parse)"])
    spec = load_hardware(args.hardware)
    known = _known_cases(args.grid)
    cases = [case for folder in folders for case in _cases(folder, spec, args.model, known)]
    print(f"{args.model} vs ncu kernel durations on {args.hardware} ({len(folders)} folders)")
    _print_table(cases)
    if args.output_csv:
        _write_csv(args.output_csv, cases)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    import script_errors

    script_errors.run("compare_ncu_kernels", main)
