"""What CPython's cyclic garbage collector costs a loop of predictions that keeps its profiles.

Usage: python benchmarks/gc_cost.py [--ops 100000] [--hardware a10] [--json]

For fresh RMSNorm ops (``examples/rmsnorm.yaml`` with a new row count each) and fresh GEMM
shapes with explicit kernel attrs (``predict_speed.fresh_gemm_ops``), it times ``--ops``
``effective_roofline`` predictions whose profiles a list keeps, as a simulator keeps them:
once with the collector as CPython runs it, counting the time of each generation's
collections (``gc.callbacks``), and once inside :func:`opmodel.batch.paused_gc`. Both timings
end with one full collection (``gc.collect()``), so the paused loop is charged for the
collection it put off: the objects it allocated, scanned once after it. Each round builds
its ops first and outside the timing, with shapes no earlier round used.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

from opmodel import LocalOp, TensorSpec
from opmodel.batch import paused_gc
from opmodel.hardware import HardwareSpec
from opmodel.models import get_model
from opmodel.parsing import load_op
from predict_speed import ROOT, checked_hardware, fresh_gemm_ops, positive_int


def _fresh_rows(indices: range) -> list[LocalOp]:
    """``examples/rmsnorm.yaml`` with ``rows + i`` rows for each ``i``."""
    seed = load_op(ROOT / "examples" / "rmsnorm.yaml")

    def grown(t: TensorSpec, i: int) -> TensorSpec:
        shape = (t.shape[0] + i, *t.shape[1:]) if len(t.shape) > 1 else t.shape
        return TensorSpec(t.role, shape, t.dtype)

    return [
        LocalOp(
            name="fresh",
            kind=seed.kind,
            phase=seed.phase,
            tensors=tuple(grown(t, i) for t in seed.tensors),
            attrs=seed.attrs,
        )
        for i in indices
    ]


def _timed(ops: list[LocalOp], hardware: HardwareSpec, paused: bool) -> dict[str, float]:
    """µs per predict over ``ops`` (profiles kept), and per generation the µs per predict its
    collections took."""
    model = get_model("effective_roofline")
    spent = [0.0, 0.0, 0.0]
    started: list[float] = [0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            spent[info["generation"]] += time.perf_counter() - started[0]

    kept = []
    gc.callbacks.append(watch)
    try:
        start = time.perf_counter()
        if paused:
            with paused_gc():
                kept = [model.predict(op, hardware) for op in ops]
        else:
            kept = [model.predict(op, hardware) for op in ops]
        gc.collect()  # what the loop left to the collector, paid here in both modes
        elapsed = time.perf_counter() - start
    finally:
        gc.callbacks.remove(watch)
    n = len(kept)
    per = {"us_per_predict": elapsed / n * 1e6}
    per.update({f"gen{g}_us_per_predict": s / n * 1e6 for g, s in enumerate(spent)})
    return per


def main() -> None:
    """Print (or ``--json``) the figures for both op families, collector on and paused."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=positive_int, default=100_000)
    parser.add_argument("--hardware", default="a10")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    hardware = checked_hardware(parser, args.hardware)
    gemm_attrs = load_op(ROOT / "examples" / "gemm_extended_roofline.yaml").attrs
    families: dict[str, Callable[[range], list[LocalOp]]] = {
        "rmsnorm": _fresh_rows,
        "gemm_explicit": lambda r: fresh_gemm_ops(gemm_attrs, r),
    }
    results: dict[str, dict[str, float]] = {}
    offset = 1
    for name, build in families.items():
        for paused in (False, True):
            ops = build(range(offset, offset + args.ops))
            offset += args.ops
            gc.collect()
            results[f"{name}_{'paused' if paused else 'collector_on'}"] = _timed(
                ops, hardware, paused
            )
            del ops
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for key, values in results.items():
        cells = "  ".join(f"{k} {v:7.2f}" for k, v in values.items())
        print(f"{key:<28} {cells}")


if __name__ == "__main__":
    main()
