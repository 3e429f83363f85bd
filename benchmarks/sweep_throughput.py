"""Throughput of batch prediction: distinct ops per second per core, and whole sweeps.

Usage: python benchmarks/sweep_throughput.py [--rows 1000000] [--hardware h100_sxm] [--json]

Two figures, both on the LLM op mix of ``llm_op_mix.py`` (Llama-3 8B/70B passes, TP 1-8,
prefill and decode):

* distinct ops per second on one core: every distinct op of the mix built fresh and predicted
  once with ``predict_many`` in this process (no repeats to reuse; hardware and kernel caches
  warm, as in any sweep after its first op);
* end-to-end sweeps: ``opmodel sweep`` in a fresh process on a CSV of ``--rows`` rows, one
  worker (one core) and every core, CSV and Parquet output; rows per second include reading,
  deduplicating, predicting and writing. Repeated layers are predicted once, which is the
  caching of repeated shapes that sweeps of real workloads rely on.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from llm_op_mix import write_mix
from opmodel.batch import op_from_row, predict_many
from opmodel.batch.tableio import read_table

MODELS = ("roofline", "effective_roofline")


def _distinct_rows(path: Path) -> list[dict[str, str]]:
    table = read_table(path)
    seen: dict[tuple[str, ...], dict[str, str]] = {}
    for values in zip(*table.values(), strict=True):
        row = dict(zip(table, values, strict=True))
        seen.setdefault((row["kind"], row["phase"], row["tensors"], row["attrs"]), row)
    return list(seen.values())


def _distinct_rate(rows: list[dict[str, str]], hardware: str, model: str) -> float:
    ops = [op_from_row(row, "mix") for row in rows]
    start = time.perf_counter()
    predict_many(ops, hardware, model)
    return len(ops) / (time.perf_counter() - start)


def _sweep(
    ops: Path, out: Path, hardware: str, model: str, workers: int | None
) -> dict[str, float]:
    argv = ["sweep", "--ops", str(ops), "--hardware", hardware, "--output", str(out)]
    argv += ["--model", model, "--no-progress"]
    if workers:
        argv += ["--workers", str(workers)]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "opmodel", *argv], capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    summary = json.loads(done.stdout)
    return {"rows": summary["rows"], "unique_ops": summary["unique_ops"], "seconds": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ops = Path(tmp) / "mix.csv"
        write_mix(ops, args.rows)
        distinct = _distinct_rows(ops)
        result: dict[str, object] = {"rows": args.rows, "distinct_ops": len(distinct)}
        for model in MODELS:
            result[f"{model}_distinct_per_s_one_core"] = _distinct_rate(
                distinct, args.hardware, model
            )
        runs: list[tuple[str, int | str, str, dict[str, float]]] = []
        for model in MODELS:
            for workers, suffix in ((1, ".csv"), (None, ".csv"), (None, ".parquet")):
                run = _sweep(ops, Path(tmp) / f"out{suffix}", args.hardware, model, workers)
                runs.append((model, workers or "all", suffix, run))
        result["sweeps"] = [
            {"model": model, "workers": workers, "output": suffix, **run}
            for model, workers, suffix, run in runs
        ]
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.rows} rows, {result['distinct_ops']} distinct ops, hardware {args.hardware}")
    for model in MODELS:
        rate = result[f"{model}_distinct_per_s_one_core"]
        print(f"  {model:<20} distinct ops, one core: {rate:10.0f} /s")
    for model, used, suffix, run in runs:
        print(
            f"  sweep {model:<20} workers={used!s:<4} {suffix:<9}"
            f" {run['seconds']:6.1f} s  {run['rows'] / run['seconds']:10.0f} rows/s"
        )


if __name__ == "__main__":
    main()
