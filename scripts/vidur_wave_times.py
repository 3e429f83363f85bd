"""Measured and predicted time per wave of a Vidur kernel over its token counts.

Usage: python scripts/vidur_wave_times.py [--data-dir data] [--hardware h100_sxm]
       [--model meta-llama/Llama-2-7b-hf] [--layer input_layernorm] [--tp 1] [--every 256]
       python scripts/vidur_wave_times.py --iterations [--hardware h100_sxm] [--layer mlp_act]

Vidur's one-token-per-CTA vLLM kernels (RMSNorm, SiluAndMul, RoPE; rows of other
implementations are left out) run ``tokens`` CTAs, so a
wave is ``resident CTAs per SM x SMs`` tokens (``effective_roofline``'s diagnostics give the
residency). Dividing a row's time by its waves shows what one wave costs as the tokens grow,
and where that cost steps: docs/models/streaming.md ("Replacement policy") reads the
least-recently-used L2 off these steps. For each row of the chosen model, layer and tensor
parallelism (one row per token count, the first of repeated measurements) the script prints the
token count, the waves, the measured and the predicted microseconds per wave and the predicted
share of the warm input found in L2.

``--iterations`` instead fits, over every model and tensor parallelism of the layer,
``time = a + b x iterations`` (``iterations = ceil(row length / 1024)``, the strided loop of
a 1024-thread CTA) by least squares, separately for the rows of ``2 .. 0.9 S`` tokens (``S``
the SMs: one CTA per SM), ``1.1 S .. 1.9 S`` (a second CTA on some SMs, all in one wave when
two fit) and ``2.1 S .. 2.9 S``: ``b`` is what one loop iteration of the SM's busiest CTAs
costs in each regime (docs/models/streaming.md, "vLLM SiluAndMul"). Nothing is written.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opmodel.core.errors import ConfigError
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.spec import SmSpec
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.validation.op_latency import OpRow, load_op_rows

ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=2)
def _rows(data_dir: Path) -> tuple[OpRow, ...]:
    """The op rows under ``data_dir``, read once per folder."""
    return tuple(load_op_rows(data_dir)[0])


def _gpu(hardware: str) -> tuple[HardwareSpec, SmSpec]:
    """The shipped config ``hardware`` and its SM structure, which waves need."""
    spec = load_hardware(hardware)
    if spec.compute.sm is None:
        raise ConfigError([f"hardware '{hardware}': no SM structure (compute.sm), no waves"])
    return spec, spec.compute.sm


@dataclass(frozen=True, slots=True)
class WaveTime:
    """One token count: its waves and the time per wave, measured and predicted."""

    tokens: int
    waves: int
    measured_us: float
    predicted_us: float
    warm_l2_hit_fraction: float


def wave_times(data_dir: Path, hardware: str, model: str, layer: str, tp: int) -> list[WaveTime]:
    """The rows labelled ``model:layer:tp<tp>:tokens<N>`` on ``hardware``, by token count."""
    rows = _rows(data_dir)
    prefix = f"{model}:{layer}:tp{tp}:tokens"
    spec, sm = _gpu(hardware)
    found: dict[int, WaveTime] = {}
    for row in rows:
        if row.hardware != hardware or not row.label.startswith(prefix):
            continue
        if row.implementation != "vllm":
            continue
        tokens = int(row.label.removeprefix(prefix))
        if tokens in found:
            continue
        profile = predict_streaming(row.op, spec)
        evaluation = profile.diagnostics
        if not isinstance(evaluation, StreamingEvaluation):
            raise ConfigError([f"{row.label}: not a streaming kernel"])
        per_wave = evaluation.resident_ctas_per_sm * sm.sm_count
        waves = math.ceil(evaluation.kernel.ctas / per_wave)
        found[tokens] = WaveTime(
            tokens=tokens,
            waves=waves,
            measured_us=row.time_s / waves * 1e6,
            predicted_us=profile.latency_s / waves * 1e6,
            warm_l2_hit_fraction=evaluation.warm_l2_hit_fraction,
        )
    if not found:
        raise ConfigError([f"{data_dir}: no rows labelled {prefix}<N> on {hardware}"])
    return [found[t] for t in sorted(found)]


@dataclass(frozen=True, slots=True)
class IterationFit:
    """``time = intercept + per_iteration x iterations`` over the rows of one regime."""

    regime: str
    rows: int
    intercept_us: float
    per_iteration_us: float


_REGIMES = (
    ("one CTA per SM", 0.0, 0.9),
    ("1.1-1.9 CTAs per SM", 1.1, 1.9),
    ("2.1-2.9 CTAs per SM", 2.1, 2.9),
)


def iteration_fits(data_dir: Path, hardware: str, layer: str) -> list[IterationFit]:
    """The per-iteration cost of ``layer``'s rows on ``hardware`` in each regime (docstring)."""
    rows = _rows(data_dir)
    _spec, sm = _gpu(hardware)
    points: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in _REGIMES}
    for row in rows:
        parts = row.label.split(":")
        if row.hardware != hardware or row.implementation != "vllm" or len(parts) != 4:
            continue
        if parts[1] != layer:
            continue
        tokens = int(parts[3].removeprefix("tokens"))
        length = row.op.tensors[0].shape[-1]
        iterations = math.ceil(length / min(1024, length))
        for name, low, high in _REGIMES:
            if max(2, low * sm.sm_count) <= tokens <= high * sm.sm_count:
                points[name].append((float(iterations), row.time_s * 1e6))
    fits = []
    for name, pts in points.items():
        if len(pts) < 2 or len({x for x, _ in pts}) < 2:
            continue
        mean_x = sum(x for x, _ in pts) / len(pts)
        mean_y = sum(y for _, y in pts) / len(pts)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in pts) / sum(
            (x - mean_x) ** 2 for x, _ in pts
        )
        fits.append(IterationFit(name, len(pts), mean_y - slope * mean_x, slope))
    if not fits:
        raise ConfigError([f"{data_dir}: no rows of layer '{layer}' on {hardware} to fit"])
    return fits


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    parser.add_argument("--layer", default="input_layernorm")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--every", type=int, default=256, help="print every Nth token count")
    parser.add_argument(
        "--iterations", action="store_true", help="fit the cost of one loop iteration"
    )
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error("--every must be >= 1")
    if args.iterations:
        sys.stdout.write("regime                 rows  intercept us  us per iteration\n")
        for fit in iteration_fits(args.data_dir, args.hardware, args.layer):
            sys.stdout.write(
                f"{fit.regime:21s} {fit.rows:5d} {fit.intercept_us:13.2f} "
                f"{fit.per_iteration_us:17.3f}\n"
            )
        return 0
    times = wave_times(args.data_dir, args.hardware, args.model, args.layer, args.tp)
    sys.stdout.write("tokens  waves  us/wave measured  predicted  warm L2 share\n")
    for t in times:
        if t.tokens % args.every == 0 or t.tokens == times[-1].tokens:
            sys.stdout.write(
                f"{t.tokens:6d} {t.waves:6d} {t.measured_us:17.2f} {t.predicted_us:10.2f} "
                f"{t.warm_l2_hit_fraction:14.2f}\n"
            )
    return 0


if __name__ == "__main__":
    from script_errors import run  # this folder is first on sys.path

    run("vidur_wave_times", main)
