"""TPU collectives over ICI against the published times found.

Usage: python scripts/compare_published_ici.py

Sources (timed on the device, without host launches):

- ``marin`` (training rows of the model's two constants, docs/models/collective.md):
  marin-community/marin issue #6736 (2026-06-28), JAX ``lax.ppermute`` between neighbouring
  chips on v5p-8 and v6e-8, repeat-count slopes of a barriered ``fori_loop``: 1 MiB per device
  in 16.94 us (v5p) and 17.45 us (v6e), 64 MiB in 781.98 and 776.34 us. A ppermute to a
  neighbour is a send over one link: ``send_recv`` of that payload.
- ``ai-hypercomputer`` (held out): Google's AI-Hypercomputer/accelerator-microbenchmarks
  (Apache-2.0), Ironwood/guides/collectives/all_gather.md, "Expected Results": TPU7x
  ``jax.lax.all_gather`` of f32[m, 8, 128] per device into f32[4m, 8, 128] over 4 devices, on
  a 2x2x1 and a 2x2x2 slice. The benchmark (Ironwood/src/benchmark_collectives.py) gathers over
  two mesh axes of 2, one TensorCore of each of 4 chips, while the chips' other TensorCores run
  a second group at once ("parallel" replica groups, whose transferred data it counts twice
  per chip): ``torus_shape [2, 2]`` on ``tpu7x`` (one TensorCore, half of its chip's links).
  Time = the table's "Transferred Data" / "Achieved Bandwidth" (the guide does not say which
  statistic of its runs the bandwidth is).
"""

from __future__ import annotations

from dataclasses import dataclass

from ratio_summary import Timed, ratio_summary

from opmodel import ops
from opmodel.core.op import LocalOp
from opmodel.hardware import load_hardware
from opmodel.models import get_model

MIB = 2**20
# marin #6736: (config, bytes per device, microseconds) of a neighbour ppermute
MARIN_PPERMUTE = (
    ("tpu_v5p", MIB, 16.94),
    ("tpu_v5p", 64 * MIB, 781.98),
    ("tpu_v6e", MIB, 17.45),
    ("tpu_v6e", 64 * MIB, 776.34),
)
# Ironwood all_gather guide: (slice, m of f32[m, 8, 128] per device, GB transferred, GB/s)
IRONWOOD_ALL_GATHER = (
    ("2x2x1", 64, 0.001572864, 71.7703034),
    ("2x2x1", 256, 0.006291456, 129.1869148),
    ("2x2x1", 1024, 0.025165824, 161.9040742),
    ("2x2x1", 4096, 0.100663296, 174.765465),
    ("2x2x1", 16384, 0.402653184, 178.7714158),
    ("2x2x2", 64, 0.001572864, 69.53210305),
    ("2x2x2", 256, 0.006291456, 127.3945462),
    ("2x2x2", 1024, 0.025165824, 162.0864029),
    ("2x2x2", 4096, 0.100663296, 174.6652133),
    ("2x2x2", 16384, 0.402653184, 178.7592252),
)
MODELS = ("effective_roofline", "roofline")


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(Timed):
    """One published collective and one model's time for it."""

    source: str
    label: str
    hardware: str
    model: str
    implementation: str
    training: bool


def published() -> list[tuple[str, str, str, LocalOp, float, bool]]:
    """(source, label, config, op, seconds, training) of every published row."""
    rows = []
    for config, payload, us in MARIN_PPERMUTE:
        op = ops.collective("send_recv", payload // 2, 2, "bf16")
        rows.append(("marin", f"ppermute {payload // MIB} MiB", config, op, us * 1e-6, True))
    for topology, m, gigabytes, rate in IRONWOOD_ALL_GATHER:
        elements = m * 8 * 128
        op = ops.collective("all_gather", 4 * elements, 4, "fp32", torus_shape=(2, 2))
        label = f"all_gather {topology} m={m}"
        rows.append(("ai-hypercomputer", label, "tpu7x", op, gigabytes / rate, False))
    return rows


def compare() -> list[Row]:
    """Every published row against each model."""
    rows = []
    for source, label, config, op, seconds, training in published():
        hardware = load_hardware(config)
        for name in MODELS:
            profile = get_model(name).predict(op, hardware)
            rows.append(Row(source=source, label=label, hardware=config, model=name,
                            measured_s=seconds, model_s=profile.latency_s,
                            implementation=profile.implementation, training=training))  # fmt: skip
    return rows


def main() -> int:
    rows = compare()
    print("TPU collectives over ICI: published times against the models")
    print(f"{'source':<17} {'op':<28} {'config':<8} {'model':<18} measured us  model us  ratio")
    for r in rows:
        split = "  (training)" if r.training else ""
        print(
            f"{r.source:<17} {r.label:<28} {r.hardware:<8} {r.model:<18} "
            f"{r.measured_s * 1e6:11.2f} {r.model_s * 1e6:9.2f} {r.ratio:5.2f}x{split}"
        )
    print(f"\n{'group':<44} rows   MAPE  geomean")
    for name in MODELS:
        for title, chosen in (
            ("training", [r for r in rows if r.training]),
            ("held out", [r for r in rows if not r.training]),
            ("held out, from 100 us", [r for r in rows if not r.training and r.measured_s >= 1e-4]),
        ):
            ratios = [r.ratio for r in chosen if r.model == name]
            count, mape, geomean = ratio_summary(ratios)
            print(f"{name + ' ' + title:<44} {count:>4} {100 * mape:5.1f} %  {geomean:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
