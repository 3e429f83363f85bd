"""Speed of opmodel: µs per predict for each model x example op, import and CLI start-up time.

Usage: python benchmarks/predict_speed.py [--hardware a10] [--repeats 7] [--number 2000] [--json]

Timing is noisy on small shared machines (the 2-core reference VM runs the same code up to
2x slower in some phases), so predict figures are given as the best (minimum, the timeit
recommendation for "how fast can this machine run it") and the median of ``--repeats`` rounds.
"warm" predicts one LocalOp again and again (its hardware-independent work and its setup for
the hardware are memoised on the op); "cold" constructs a new LocalOp from the same tensors
before each predict, so it includes construction, validation and the setup.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from opmodel import DType, LocalOp, OpKind, OpModelError, Phase, TensorRole, TensorSpec
from opmodel.core.attrs import AttrValue
from opmodel.core.model import OpModel
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model, model_names
from opmodel.parsing import load_op

ROOT = Path(__file__).resolve().parent.parent
_OpMaker = Callable[[Mapping[str, AttrValue], range], list[LocalOp]]


def _best_and_median_us(stmt: object, number: int, repeats: int) -> tuple[float, float]:
    rounds = timeit.repeat(stmt, number=number, repeat=repeats)  # type: ignore[arg-type]
    return min(rounds) / number * 1e6, statistics.median(rounds) / number * 1e6


def _time_op(
    model: OpModel, op: LocalOp, hardware: HardwareSpec, number: int, repeats: int
) -> dict[str, float]:
    """Warm and cold µs per predict of ``op``, best and median."""

    def cold() -> object:
        fresh = LocalOp(
            name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs=op.attrs
        )
        return model.predict(fresh, hardware)

    warm = _best_and_median_us(lambda: model.predict(op, hardware), number, repeats)
    cold_ = _best_and_median_us(cold, max(number // 4, 1), repeats)
    return {
        "warm_best_us": round(warm[0], 2),
        "warm_median_us": round(warm[1], 2),
        "cold_best_us": round(cold_[0], 2),
        "cold_median_us": round(cold_[1], 2),
    }


def predict_times(hardware_name: str, number: int, repeats: int) -> list[dict[str, object]]:
    """Median warm and cold µs per predict for every model and example op."""
    hardware = load_hardware(hardware_name)
    rows: list[dict[str, object]] = []
    for model_name in model_names():
        model = get_model(model_name)
        for path in sorted((ROOT / "examples").glob("*.yaml")):
            op = load_op(path)
            if model.supports(op):
                times = _time_op(model, op, hardware, number, repeats)
                rows.append({"model": model_name, "op": path.stem, **times})
    return rows


def fresh_gemm_ops(attrs: Mapping[str, AttrValue], indices: range) -> list[LocalOp]:
    """The issue-4 GEMM of ``examples/gemm_extended_roofline.yaml`` with ``attrs`` at
    m = 4096 + 8 i for each i of ``indices`` (n = 32768, k = 8192, bf16): shapes never seen
    before when the indices are new."""
    seed = load_op(ROOT / "examples" / "gemm_extended_roofline.yaml")
    a, b, c = seed.tensors
    return [
        LocalOp(
            name="fresh",
            kind=seed.kind,
            phase=seed.phase,
            tensors=(
                TensorSpec(a.role, (4096 + 8 * i, 8192), a.dtype),
                b,
                TensorSpec(c.role, (4096 + 8 * i, 32768), c.dtype),
            ),
            attrs=attrs,
        )
        for i in indices
    ]


def fresh_grouped_ops(attrs: Mapping[str, AttrValue], indices: range) -> list[LocalOp]:
    """DeepSeek-V3's routed-expert up-projection (gate and up fused, as in its config: hidden
    7168, moe_intermediate_size 2048, 256 routed experts, 8 per token) over 4,096 tokens, so
    32,768 rows, with a routing drawn afresh for each ``i`` of ``indices`` (seeded, skewed: an
    expert's share is a squared uniform draw): group sizes never seen before."""
    ops = []
    for i in indices:
        draw = random.Random(i)
        weights = [draw.random() ** 2 for _ in range(256)]
        total = sum(weights)
        sizes = [int(32768 * w / total) for w in weights]
        sizes[0] += 32768 - sum(sizes)
        ops.append(
            LocalOp(
                name="experts_up",
                kind=OpKind.GROUPED_GEMM,
                phase=Phase.PREFILL,
                tensors=(
                    TensorSpec(TensorRole.INPUT, (32768, 7168), DType.BF16),
                    TensorSpec(TensorRole.WEIGHT, (256, 4096, 7168), DType.BF16),
                    TensorSpec(TensorRole.OUTPUT, (32768, 4096), DType.BF16),
                ),
                attrs={"transpose_b": True, "group_sizes": tuple(sizes), **attrs},
            )
        )
    return ops


def fresh_shape_times(hardware_name: str, count: int, repeats: int) -> dict[str, float]:
    """µs per GEMM predict when every op has a shape not seen before (nothing memoised but
    what depends on the hardware and kernel alone; op construction not timed), for the
    issue-4 GEMM (m = 4096 + 8 i, n = 32768, k = 8192, bf16): ``effective_roofline`` with an
    explicit kernel and with automatic selection, ``extended_roofline`` with the explicit
    kernel (issue 3's budget); and a grouped GEMM of 256 experts with a fresh routing
    (``fresh_grouped_ops``) through ``effective_roofline``, explicit and selected. The best
    and the median over ``repeats`` rounds of ``count``
    new shapes each, a round's figure being the median of its single predicts (so a garbage
    collection or a slow moment of the VM does not count as the model's time)."""
    hardware = load_hardware(hardware_name)
    seed = load_op(ROOT / "examples" / "gemm_extended_roofline.yaml")
    out: dict[str, float] = {}
    tile: dict[str, AttrValue] = {"cta_tile_m": 128, "cta_tile_n": 256}
    cases: tuple[tuple[str, str, Mapping[str, AttrValue], _OpMaker], ...] = (
        ("effective_roofline", "explicit_kernel", seed.attrs, fresh_gemm_ops),
        ("effective_roofline", "auto_selection", {}, fresh_gemm_ops),
        ("extended_roofline", "explicit_kernel", seed.attrs, fresh_gemm_ops),
        ("effective_roofline", "grouped_explicit_kernel", tile, fresh_grouped_ops),
        ("effective_roofline", "grouped_auto_selection", {}, fresh_grouped_ops),
    )
    first = 1
    for model_name, label, attrs, make in cases:
        model = get_model(model_name)
        rounds = []
        for _ in range(repeats):
            ops = make(attrs, range(first, first + count))
            first += count
            times = []
            for op in ops:
                start = time.perf_counter()
                model.predict(op, hardware)
                times.append(time.perf_counter() - start)
            rounds.append(statistics.median(times))
        prefix = f"{model_name}_fresh_shape_{label}"
        out[f"{prefix}_best_us"] = round(min(rounds) * 1e6, 1)
        out[f"{prefix}_median_us"] = round(statistics.median(rounds) * 1e6, 1)
    return out


def fresh_mla_times(count: int, repeats: int) -> dict[str, float]:
    """µs per FlashMLA decode predict on ``h100_sxm`` (its kernel needs sm_90) with key lengths
    never seen before (1,000-1,000 + count blocks of 64 per request; DeepSeek-V3's 128 heads
    on one latent head), at 128 and at 8,192 requests: the scheduler walk's cost should not
    grow with the batch (docs/models/attention.md, "Variable lengths"). Best and median
    rounds, as :func:`fresh_shape_times`."""
    hardware, model = load_hardware("h100_sxm"), get_model("effective_roofline")
    out: dict[str, float] = {}
    first = 1000
    for batch in (128, 8192):
        rounds = []
        for _ in range(repeats):
            times = []
            for kv_blocks in range(first, first + count):
                keys = kv_blocks * 64
                op = LocalOp(
                    name="mla",
                    kind=OpKind.ATTENTION_DECODE,
                    phase=Phase.DECODE,
                    tensors=(
                        TensorSpec(TensorRole.INPUT, (batch, 128, 1, 576), DType.BF16, "q"),
                        TensorSpec(TensorRole.INPUT, (batch, 1, keys, 576), DType.BF16, "k"),
                        TensorSpec(TensorRole.INPUT, (batch, 1, keys, 512), DType.BF16, "v"),
                        TensorSpec(TensorRole.OUTPUT, (batch, 128, 1, 512), DType.BF16, "o"),
                    ),
                    attrs={"shared_kv": True},
                )
                start = time.perf_counter()
                model.predict(op, hardware)
                times.append(time.perf_counter() - start)
            first += count
            rounds.append(statistics.median(times))
        out[f"mla_decode_{batch}_requests_best_us"] = round(min(rounds) * 1e6, 1)
        out[f"mla_decode_{batch}_requests_median_us"] = round(statistics.median(rounds) * 1e6, 1)
    return out


def _median_wall_s(command: list[str], repeats: int) -> float:
    walls = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def startup_times(repeats: int) -> dict[str, float]:
    """Median import time of ``opmodel`` (in-process) and wall time of ``opmodel predict``."""
    probe = "import time; t=time.perf_counter(); import opmodel; print(time.perf_counter()-t)"
    imports = [
        float(
            subprocess.run(
                [sys.executable, "-c", probe], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(repeats)
    ]
    cli = [
        sys.executable,
        "-m",
        "opmodel.cli",
        "predict",
        "--hardware",
        "a10",
        "--op",
        str(ROOT / "examples" / "gemm.yaml"),
    ]
    return {
        "import_opmodel_ms": round(statistics.median(imports) * 1e3, 1),
        "python_startup_ms": round(
            _median_wall_s([sys.executable, "-c", "pass"], repeats) * 1e3, 1
        ),
        "opmodel_predict_wall_ms": round(_median_wall_s(cli, repeats) * 1e3, 1),
    }


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (argparse turns the ValueError into a one-line error)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def checked_hardware(parser: argparse.ArgumentParser, name: str) -> HardwareSpec:
    """The config ``--hardware`` names, or the parser's one-line error naming the valid ones."""
    try:
        return load_hardware(name)
    except OpModelError as exc:
        parser.error(f"--hardware: {str(exc).splitlines()[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", default="a10")
    parser.add_argument("--repeats", type=positive_int, default=7)
    parser.add_argument("--number", type=positive_int, default=2000)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    checked_hardware(parser, args.hardware)
    result: dict[str, Any] = {
        "predict": predict_times(args.hardware, args.number, args.repeats),
        "startup": startup_times(args.repeats),
        "fresh_shapes": {
            **fresh_shape_times(args.hardware, 300, args.repeats),
            **fresh_mla_times(200, args.repeats),
        },
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    columns = ("warm_best_us", "warm_median_us", "cold_best_us", "cold_median_us")
    print(f"{'model':<12} {'op':<24} " + " ".join(f"{c:>15}" for c in columns))
    for row in result["predict"]:
        print(f"{row['model']:<12} {row['op']:<24} " + " ".join(f"{row[c]:>15}" for c in columns))
    for key, value in (*result["startup"].items(), *result["fresh_shapes"].items()):
        print(f"{key:<26} {value}")


if __name__ == "__main__":
    main()
