"""Measured and predicted time per wave of a Vidur kernel over its token counts.

Usage: python scripts/vidur_wave_times.py [--data-dir data] [--hardware h100_sxm]
       [--model meta-llama/Llama-2-7b-hf] [--layer input_layernorm] [--tp 1] [--every 256]

Vidur's one-token-per-CTA vLLM kernels (RMSNorm, SiluAndMul, RoPE) run ``tokens`` CTAs, so a
wave is ``resident CTAs per SM x SMs`` tokens (``effective_roofline``'s diagnostics give the
residency). Dividing a row's time by its waves shows what one wave costs as the tokens grow,
and where that cost steps: docs/models/streaming.md ("Replacement policy") reads the
least-recently-used L2 off these steps. For each row of the chosen model, layer and tensor
parallelism (one row per token count, the first of repeated measurements) the script prints the
token count, the waves, the measured and the predicted microseconds per wave and the predicted
share of the warm input found in L2. Nothing is written.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.validation.op_latency import load_op_rows

ROOT = Path(__file__).resolve().parent.parent


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
    rows, _skipped = load_op_rows(data_dir)
    prefix = f"{model}:{layer}:tp{tp}:tokens"
    spec = load_hardware(hardware)
    sm = spec.compute.sm
    if sm is None:
        raise ConfigError([f"hardware '{hardware}': no SM structure (compute.sm), no waves"])
    found: dict[int, WaveTime] = {}
    for row in rows:
        if row.hardware != hardware or not row.label.startswith(prefix):
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    parser.add_argument("--layer", default="input_layernorm")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--every", type=int, default=256, help="print every Nth token count")
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error("--every must be >= 1")
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
