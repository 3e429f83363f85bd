"""NVIDIA's nvMatmulHeuristics next to opmodel on the held-out GEMM rows of ``data/gemm``.

Usage: python scripts/compare_nvmatmulheuristics.py [--data-dir data] [--limit N]
                                                     [--output-csv rows.csv]

Needs ``pip install nvidia-matmul-heuristics`` (NVIDIA's licence; not a dependency of opmodel,
tested with 0.1.0.27). For every row that ``opmodel validate-gemm-latency`` holds out (the same
deterministic split; opmodel's models get their fitted fixed overhead as in that command), the
library's GENERIC target with no flags picks its top-1 kernel configuration for the row's GPU
(a predefined descriptor: A100 SXM 80GB, H100 SXM, A40 PCIe, B200), precision (fp16 ``HSH``,
bf16 ``TST``, fp32 with TF32 compute ``SFS``), layout (row major, the row's transposes) and
batch, and its runtime estimate is the prediction. Nothing is fitted to nvMatmulHeuristics.
Rows it cannot take are counted by reason: clock-locked rows (Rapid-LLM's, at ~1.04 GHz; the
descriptors carry the boost clock) and GPUs without a descriptor.

Prints MAPE, median and p90 APE and the geometric-mean ratio (predicted / measured) per source
and GPU and per size class, for nvMatmulHeuristics and opmodel's models on the same rows. The
column ``effective_on_nvmmh_kernel`` is opmodel's ``effective_roofline`` running the library's
top-1 kernel (its CTA and warp tiles, stages, split-K and swizzle, as op attrs) instead of the
kernel its own selection picks, with the same fitted overhead: how much of opmodel's error is
its selection choosing a faster kernel than a library heuristic would. The GENERIC target
describes sm_80-style mma.sync kernels on every GPU, so the column means something only where
those run (A100, A40), not on H100 or B200.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opmodel.core.dtypes import DType
from opmodel.core.errors import OpModelError
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.validation.gemm_data import GemmRow, load_gemm_rows
from opmodel.validation.gemm_latency import ValidationOptions, row_op, validate_gemm_latency
from opmodel.validation.metrics import ErrorMetrics, error_metrics

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("roofline", "effective_roofline")
ON_NVMMH_KERNEL = "effective_on_nvmmh_kernel"
# the library's kernel description, e.g. "stages(5) cta(128 128 32) warp(64 64 32) ... splitK(1)
# swizz(8)": each field and the op attrs it sets
KERNEL_FIELDS = {
    "cta": ("cta_tile_m", "cta_tile_n", "cta_tile_k"),
    "warp": ("warp_tile_m", "warp_tile_n", "warp_tile_k"),
    "stages": ("pipeline_stages",),
    "splitK": ("split_k",),
    "swizz": ("raster_swizzle",),
}
GPUS = {  # opmodel config -> NvMatmulHeuristicsNvidiaGpu member
    "a100_80gb_sxm": "A100_SXM_80GB",
    "h100_sxm": "H100_SXM",
    "a40": "A40_PCIE",
    "b200": "B200",
}
PRECISIONS = {  # (storage dtype, compute dtype) -> nvMatmulHeuristics precision string
    (DType.FP16, None): "HSH",
    (DType.BF16, None): "TST",
    (DType.FP32, DType.TF32): "SFS",
}


def _library() -> Any:
    try:
        import nvMatmulHeuristics  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: PLC0415
    except ImportError:
        sys.exit(
            "compare_nvmatmulheuristics: the nvMatmulHeuristics module is not installed "
            "(pip install nvidia-matmul-heuristics)"
        )
    return nvMatmulHeuristics


def _row_key(record: dict[str, object]) -> tuple[object, ...]:
    return tuple(record[k] for k in ("source", "label", "hardware", "batch", "m", "n", "k"))


class NvmmhPredictor:
    """Top-1 runtime estimates, one heuristics handle per GPU."""

    def __init__(self, library: Any) -> None:
        self._lib = library
        self._handles: dict[str, Any] = {}
        self._last: tuple[GemmRow, dict[str, Any]] | None = None  # both columns ask per row

    def why_not(self, row: GemmRow) -> str | None:
        """The reason the library cannot take ``row``, or None."""
        if row.clock_hz is not None:
            return "clock-locked row (the GPU descriptors run at the boost clock)"
        if row.hardware not in GPUS:
            return f"no nvMatmulHeuristics GPU descriptor for {row.hardware}"
        if (row.dtype, row.compute_dtype) not in PRECISIONS:
            return f"no precision string for {row.dtype.value}/{row.compute_dtype}"
        return None

    def seconds(self, row: GemmRow) -> float:
        """The library's runtime estimate of its top-1 configuration for ``row``."""
        return float(self._top1(row)["runtime"])

    def kernel_attrs(self, row: GemmRow) -> dict[str, int]:
        """The library's top-1 kernel for ``row`` as opmodel GEMM kernel attrs."""
        text = str(self._top1(row)["kernel"])
        attrs: dict[str, int] = {}
        for field, names in KERNEL_FIELDS.items():
            found = re.search(rf"\b{field}\(([\d ]+)\)", text)
            if found is None:
                msg = f"nvMatmulHeuristics kernel without {field}(...): {text}"
                raise ValueError(msg)
            attrs.update(zip(names, map(int, found.group(1).split()), strict=True))
        return attrs

    def _top1(self, row: GemmRow) -> dict[str, Any]:
        """The library's top-1 configuration for ``row``, asked once per row."""
        if self._last is None or self._last[0] is not row:
            self._last = (row, self._query(row))
        return self._last[1]

    def _query(self, row: GemmRow) -> dict[str, Any]:
        lib = self._lib
        handle = self._handles.get(row.hardware)
        if handle is None:
            handle = self._handles[row.hardware] = lib.NvMatmulHeuristicsInterfaceEx(
                backend=lib.NvMatmulHeuristicsTarget.GENERIC,
                flags=lib.NvMatmulHeuristicsFlags.NONE,
                gpu=lib.NvMatmulHeuristicsNvidiaGpu[GPUS[row.hardware]],
            )
        layout = lib.NvMatmulHeuristicsMatmulLayout[
            f"{'T' if row.transpose_a else 'N'}{'T' if row.transpose_b else 'N'}_ROW_MAJOR"
        ]
        problem = handle.makeNvMatmulHeuristicsProblem(row.m, row.n, row.k, layout, row.batch)
        configs = handle.get(problem, 1, precision=PRECISIONS[(row.dtype, row.compute_dtype)])
        if not configs or configs[0]["runtime"] <= 0:
            msg = f"nvMatmulHeuristics returned no configuration for {row.label}"
            raise ValueError(msg)
        return dict(configs[0])


class OnNvmmhKernel:
    """opmodel's effective_roofline on the library's top-1 kernel, without the fixed device
    overhead (the caller adds the overhead fitted for its own kernels)."""

    def __init__(self, predictor: NvmmhPredictor) -> None:
        self._predictor = predictor
        self._model = get_model("effective_roofline")
        self._hardware: dict[str, HardwareSpec] = {}

    def seconds(self, row: GemmRow) -> float:
        """Predicted seconds of the library's kernel, overhead excluded."""
        spec = self._hardware.get(row.hardware)
        if spec is None:
            spec = load_hardware(row.hardware)
            no_overhead = dataclasses.replace(spec.overhead, fixed_device_overhead_cycles=0)
            spec = self._hardware[row.hardware] = dataclasses.replace(spec, overhead=no_overhead)
        op = row_op(dataclasses.replace(row, kernel=self._predictor.kernel_attrs(row)))
        return self._model.predict(op, spec).latency_s


def _groups(records: Sequence[dict[str, object]]) -> dict[str, list[dict[str, object]]]:
    groups: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in records:
        groups["overall"].append(record)
        groups[f"{record['source']}:{record['hardware']}"].append(record)
        groups[f"class {record['class']}"].append(record)
    return groups


def _metrics(records: Sequence[dict[str, object]], column: str) -> ErrorMetrics:
    measured = [float(r["measured_s"]) for r in records]  # type: ignore[arg-type]
    return error_metrics([float(r[column]) for r in records], measured)  # type: ignore[arg-type]


def _print_table(records: Sequence[dict[str, object]], write: Callable[[str], object]) -> None:
    names = ("nvmmh", *MODELS, ON_NVMMH_KERNEL)
    head = "".join(f"{n[:18]:>28}" for n in names)
    write(f"{'group':30} {'n':>6}{head}\n")
    write(f"{'':37}" + "".join(f"{'MAPE    p50    p90   gm':>28}" for _ in names) + "\n")
    for group, members in sorted(_groups(records).items(), key=lambda kv: kv[0] != "overall"):
        cells = []
        for name in names:
            m = _metrics(members, f"{name}_s")
            cells.append(
                f"{m.mape:6.1%} {m.median_ape:6.1%} {m.p90_ape:6.1%} {m.geomean_ratio:5.2f}"
            )
        write(f"{group:30} {len(members):6d}" + "".join(f"{c:>28}" for c in cells) + "\n")


def compare(
    data_dir: Path, limit: int | None, predictor: NvmmhPredictor
) -> tuple[list[dict[str, object]], Counter[str]]:
    """Held-out rows with nvMatmulHeuristics' and opmodel's predictions, and skip reasons."""
    loaded = load_gemm_rows(data_dir)
    rows = loaded.rows
    if limit is not None and limit < len(rows):
        step = len(rows) / limit
        rows = [rows[int(i * step)] for i in range(limit)]
    report = validate_gemm_latency(rows, MODELS, options=ValidationOptions())
    by_key: dict[tuple[object, ...], list[GemmRow]] = defaultdict(list)
    for row in rows:
        key = (row.source, row.label, row.hardware, row.batch, row.m, row.n, row.k)
        by_key[key].append(row)
    skipped: Counter[str] = Counter()
    out = []
    on_kernel = OnNvmmhKernel(predictor)
    for record in report.per_row:
        row = by_key[_row_key(record)].pop(0)
        reason = predictor.why_not(row)
        if reason is not None:
            skipped[reason] += 1
            continue
        try:
            on_kernel_s = on_kernel.seconds(row) + float(record["effective_roofline_overhead_s"])  # type: ignore[arg-type]
        except OpModelError as exc:
            skipped[f"opmodel rejects the library's kernel ({exc})"] += 1
            continue
        out.append(
            {**record, "nvmmh_s": predictor.seconds(row), f"{ON_NVMMH_KERNEL}_s": on_kernel_s}
        )
    return out, skipped


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--limit", type=int, default=None, help="an evenly spaced subset")
    parser.add_argument("--output-csv", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be a positive integer (got {args.limit})")
    records, skipped = compare(args.data_dir, args.limit, NvmmhPredictor(_library()))
    if not records:
        sys.exit("compare_nvmatmulheuristics: no held-out row the library can take")
    _print_table(records, sys.stdout.write)
    for reason, count in sorted(skipped.items()):
        sys.stderr.write(f"skipped: {count} x {reason}\n")
    if args.output_csv is not None:
        with args.output_csv.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(records)
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("compare_nvmatmulheuristics", main)
