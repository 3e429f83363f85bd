"""NCCL all-reduces against published ``nccl-tests`` outputs (times, not stated bandwidths).

Usage: python scripts/compare_published_nccl_tests.py [--model effective_roofline]

Source: CoreWeave's coreweave/nccl-tests README (commit 0120901), two printed
``all_reduce_perf`` runs over fp32 buffers of 512 MiB to 8 GiB, the out-of-place time of each
size (nccl-tests prints the mean over its 50 iterations):

- "Running Jobs" (MPI Operator): an H100 job launched from the example manifest
  ``nccl-test-distributed-h100-64-las1-sharp-mpijob.yaml`` (NCCL's SHARP plugin loaded; the
  NCCL version is not printed). Its printed bus over algorithm bandwidth, 356.01 / 179.88 =
  1.9792 = ``2 (n - 1) / n``, gives ``n = 96`` ranks, 12 nodes of 8 (the manifest's name says
  64): ``h100_sxm``, ``ranks_per_node`` 8, across its 8 NDR NICs.
- "Expected Performance", GB200, "Single Rack" (NCCL 2.26.2): the 72 GPUs of one NVL72 rack
  in one NVLink domain: ``gb200``, one node of 72.

Every row is held out; nothing is fitted. The two racks and twenty racks runs the README also
prints need the racks' NICs, which the ``gb200`` config does not give (CoreWeave's README
names Quantum-X800 InfiniBand for its GB200 clusters without the per-GPU NIC rate).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ratio_summary import ratio_summary

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

GIB = 1 << 30
# (label, config, ranks, ranks per node, ((buffer bytes, out-of-place microseconds), ...))
CASES: tuple[tuple[str, str, int, int, tuple[tuple[int, float], ...]], ...] = (
    (
        "96 x H100, 12 nodes",
        "h100_sxm",
        96,
        8,
        ((GIB // 2, 2984.6), (GIB, 5808.0), (2 * GIB, 11163), (4 * GIB, 22181), (8 * GIB, 43980)),
    ),
    (
        "72 x GB200, one NVL72 rack",
        "gb200",
        72,
        72,
        ((GIB // 2, 1806.7), (GIB, 3108.8), (2 * GIB, 5589.1), (4 * GIB, 10094), (8 * GIB, 20299)),
    ),
)


@dataclass(frozen=True, slots=True)
class Row:
    """One published all-reduce time and the model's."""

    case: str
    buffer_bytes: int
    measured_s: float
    model_s: float
    implementation: str

    @property
    def ratio(self) -> float:
        """Model over measured."""
        return self.model_s / self.measured_s

    @property
    def bus_bandwidth_bytes_per_s(self) -> float:
        """nccl-tests' bus bandwidth of the measured time, ``2 (n - 1) / n x S / t``."""
        ranks = next(case[2] for case in CASES if case[0] == self.case)
        return 2 * (ranks - 1) / ranks * self.buffer_bytes / self.measured_s


def compare(model_name: str = "effective_roofline") -> list[Row]:
    """Every published row under ``model_name``."""
    model = get_model(model_name)
    rows = []
    for label, config, ranks, per_node, sizes in CASES:
        hardware = load_hardware(config)
        for size, microseconds in sizes:
            op = ops.collective("all_reduce", size // 4, ranks, "fp32", ranks_per_node=per_node)
            profile = model.predict(op, hardware)
            rows.append(Row(label, size, microseconds * 1e-6, profile.latency_s,
                            profile.implementation))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="effective_roofline")
    args = parser.parse_args(argv)
    rows = compare(args.model)
    print(f"{'case':<28} {'MiB':>5} {'busbw':>6} {'measured us':>11} {'model us':>9}  ratio  run")
    for r in rows:
        print(
            f"{r.case:<28} {r.buffer_bytes >> 20:>5} {r.bus_bandwidth_bytes_per_s / 1e9:>6.1f} "
            f"{r.measured_s * 1e6:>11.1f} {r.model_s * 1e6:>9.1f} {r.ratio:>5.2f}x  "
            f"{r.implementation.partition('/')[2]}"
        )
    print(f"\n{'case':<28} rows   MAPE  geomean")
    for label, *_ in CASES:
        count, mape, geomean = ratio_summary([r.ratio for r in rows if r.case == label])
        print(f"{label:<28} {count:>4} {100 * mape:5.1f} %  {geomean:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
