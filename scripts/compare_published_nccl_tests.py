"""NCCL all-reduces against published ``nccl-tests`` runs of healthy systems.

Usage: python scripts/compare_published_nccl_tests.py [--model effective_roofline]

Sources (each row held out; nothing is fitted):

- ``coreweave``: coreweave/nccl-tests README (commit 0120901), two printed ``all_reduce_perf``
  runs over fp32 buffers of 512 MiB to 8 GiB, the out-of-place time of each size (the mean of
  its 50 iterations). An H100 job launched from the example manifest
  ``nccl-test-distributed-h100-64-las1-sharp-mpijob.yaml`` (NCCL's SHARP plugin loaded; the NCCL
  version is not printed): its printed bus over algorithm bandwidth, 356.01 / 179.88 = 1.9792 =
  ``2 (n - 1) / n``, gives ``n = 96`` ranks, 12 nodes of 8 (the manifest's name says 64):
  ``h100_sxm``, ``ranks_per_node`` 8, across its 8 NDR NICs. And "Expected Performance",
  GB200, "Single Rack" (NCCL 2.26.2): the 72 GPUs of one NVL72 rack in one NVLink domain:
  ``gb200``, one node of 72, run as ``nvls``: its bus bandwidth reaches 839-847 GB/s at 4-8 GiB,
  above what NCCL's ring gets from NVLink5 (695 GB/s on 8 B300s with NVLS off, NVIDIA/nccl
  issue #2140), and ``gb200``'s NVLS rate is an estimate from those B300s. The README's two- and
  twenty-rack runs need the racks' NICs, which ``gb200`` does not give.
- ``azure``: Microsoft's Azure AI benchmarking guide (github.com/Azure/AI-benchmarking-guide),
  "NCCL Bandwidth": the in-place bus bandwidth of ``all_reduce_perf`` for each power of two from
  1 KiB to 8 GiB, one VM: ND A100 v4 (Azure_Results/ND_A100_v4_results.md, commit 3bb66ca; NCCL
  2.18.5; 8 x A100-SXM4-80GB, NCCL's ring: the page's "NVLS algorithm" label is a copy, the
  A100 has no NVLink SHARP), ND H100 v5 ("Azure Results/ND_H100_v5_results.md", f350e7e; NCCL
  2.18.5, NVLS) and ND H200 v5 (Azure_Results/ND_H200_v5_results.md, 7f20e5f; NCCL 2.20.5,
  NVLS), 8 GPUs each, and ND GB200 v6 (Azure_Results/ND_GB200_v6_results.md, 2a370be; NCCL
  2.25.1, "Ring algorithm"), the 4 GPUs of one VM. Time = ``2 (n - 1) / n x S / busbw``. The
  bandwidths are printed to 0.01 GB/s, so the smallest sizes' times carry up to 12 % of
  rounding; the summary's second column starts at 1 MiB.
- ``verda``: Verda's "NVIDIA GB300 NVL72: GPU Architecture & Performance" (verda.com/blog,
  gb300-nvl72-architecture), a full-rack ``all_reduce_perf`` (18 compute trays x 4 GPUs, fp32,
  1 to 16 GB, 1,000 iterations), the out-of-place times: ``gb300``, one node of 72. Its bus
  bandwidth (727-919 GB/s) exceeds the 900 GB/s NVLink line rate, which only NVLink SHARP's
  in-switch reduction allows, so the model runs ``nvls`` (``gb300``'s NVLS rate is an
  estimate from 8 B300s, gb300.yaml: this run checks it).
- ``tinygrad``: a user's ``all_reduce_perf -b 256M -e 2G -f 2 -g 4`` on 4 RTX 4090s over PCIe
  4.0 (tinygrad/open-gpu-kernel-modules issue #36, the driver with peer-to-peer enabled; fp32),
  the out-of-place times of 256 MiB to 1 GiB (the 2 GiB row is cut off in the stored copy):
  ``rtx4090``, whose PCIe section gives the line rate only (NCCL's share of it, 370/450, is an
  NVLink4 figure; the board's rate is this run's to check). On PCIe the host's root complexes
  and switches set what NCCL gets ("On PCI systems, the performance you get is usually
  determined by the bandwidth your CPU and memory can deliver", NCCL's maintainer, NVIDIA/nccl
  issue #1639), so another server's 4090s may run slower.
- ``hpe``: a ``rccl-tests`` ``all_reduce_perf`` on one node of 8 MI300Xs (crickett-hpe/hpc-ai-envs
  pull request #30, rccl-tests develop:83d38d9; fp32), the out-of-place time of its 8 MiB row
  (the one row of the table the stored copy holds): ``mi300x``'s xGMI mesh at RCCL's 48 GB/s a
  link.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ratio_summary import Timed, ratio_summary

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

GIB = 1 << 30
MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class Case:
    """One published run: the system, how the model runs it, and its (bytes, seconds) rows."""

    label: str
    source: str
    config: str
    ranks: int
    ranks_per_node: int
    algorithm: str
    rows: tuple[tuple[int, float], ...]


def _times(microseconds: tuple[float, ...], first: int) -> tuple[tuple[int, float], ...]:
    """Sizes from ``first`` bytes up in powers of two, with their printed times."""
    return tuple((first << i, us * 1e-6) for i, us in enumerate(microseconds))


def _from_busbw(ranks: int, busbw_gb_s: tuple[float, ...]) -> tuple[tuple[int, float], ...]:
    """Sizes from 1 KiB up in powers of two, with the time their bus bandwidth gives."""
    factor = 2 * (ranks - 1) / ranks
    return tuple((1024 << i, factor * (1024 << i) / (bw * 1e9)) for i, bw in enumerate(busbw_gb_s))


CASES = (
    Case("96 x H100, 12 nodes", "coreweave", "h100_sxm", 96, 8, "auto",
         _times((2984.6, 5808.0, 11163, 22181, 43980), GIB // 2)),
    Case("72 x GB200, NVL72 rack, NVLS", "coreweave", "gb200", 72, 72, "nvls",
         _times((1806.7, 3108.8, 5589.1, 10094, 20299), GIB // 2)),
    Case("72 x GB300, NVL72 rack, NVLS", "verda", "gb300", 72, 72, "nvls",
         _times((2914.04, 5253.87, 9972.94, 19176.2, 36878.3), GIB)),
    Case("4 x RTX 4090, PCIe", "tinygrad", "rtx4090", 4, 4, "auto",
         _times((15654, 31194, 62077), GIB // 4)),
    Case("8 x MI300X, xGMI", "hpe", "mi300x", 8, 8, "auto", _times((91.10,), 8 * MIB)),
    Case("ND A100 v4, 8 GPUs, ring", "azure", "a100_80gb_sxm", 8, 8, "auto", _from_busbw(8, (
        0.04, 0.08, 0.17, 0.33, 0.67, 1.37, 2.70, 5.15, 10.11, 19.24, 36.22, 53.54, 71.43,
        89.99, 109.22, 132.77, 166.63, 174.18, 213.87, 221.58, 228.10, 230.22, 230.48, 231.58))),
    Case("ND H100 v5, 8 GPUs, NVLS", "azure", "h100_sxm", 8, 8, "nvls", _from_busbw(8, (
        0.07, 0.14, 0.27, 0.53, 0.95, 1.71, 2.72, 5.40, 10.86, 21.35, 43.70, 81.93, 128.73,
        172.13, 234.45, 295.53, 361.78, 400.61, 423.38, 438.46, 466.35, 472.36, 475.54,
        478.87))),
    Case("ND H200 v5, 8 GPUs, NVLS", "azure", "h200_sxm", 8, 8, "nvls", _from_busbw(8, (
        0.06, 0.12, 0.23, 0.47, 0.93, 1.84, 3.72, 7.39, 14.75, 29.38, 52.96, 88.78, 138.44,
        181.94, 240.41, 300.91, 368.11, 412.45, 432.24, 442.72, 467.58, 472.57, 477.41,
        479.98))),
    Case("ND GB200 v6, 4 GPUs, ring", "azure", "gb200", 4, 4, "ring", _from_busbw(4, (
        0.10, 0.19, 0.38, 0.76, 1.46, 2.88, 5.71, 11.29, 22.41, 44.07, 80.48, 110.43, 146.27,
        253.46, 331.09, 422.62, 550.73, 574.19, 593.53, 618.74, 646.87, 666.63, 673.06,
        679.61))),
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(Timed):
    """One published all-reduce time and the model's."""

    case: str
    ranks: int
    buffer_bytes: int
    implementation: str

    @property
    def bus_bandwidth_bytes_per_s(self) -> float:
        """nccl-tests' bus bandwidth of the measured time, ``2 (n - 1) / n x S / t``."""
        return 2 * (self.ranks - 1) / self.ranks * self.buffer_bytes / self.measured_s


def compare(model_name: str = "effective_roofline") -> list[Row]:
    """Every published row under ``model_name``."""
    model = get_model(model_name)
    rows = []
    for case in CASES:
        hardware = load_hardware(case.config)
        for size, seconds in case.rows:
            per_node, algorithm = case.ranks_per_node, case.algorithm
            op = ops.collective(
                "all_reduce", size // 4, case.ranks, "fp32", ranks_per_node=per_node,
                algorithm=algorithm,
            )  # fmt: skip
            profile = model.predict(op, hardware)
            rows.append(Row(case=case.label, ranks=case.ranks, buffer_bytes=size,
                            measured_s=seconds, model_s=profile.latency_s,
                            implementation=profile.implementation))  # fmt: skip
    return rows


Summary = tuple[int, float, float]  # count, MAPE, geometric-mean ratio


def summary(rows: list[Row]) -> dict[str, tuple[Summary, Summary]]:
    """Per case: (count, MAPE, geomean) over every size and over the sizes from 1 MiB."""
    out = {}
    for case in CASES:
        ratios = [r.ratio for r in rows if r.case == case.label]
        large = [r.ratio for r in rows if r.case == case.label and r.buffer_bytes >= MIB]
        out[case.label] = (ratio_summary(ratios), ratio_summary(large))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="effective_roofline")
    args = parser.parse_args(argv)
    rows = compare(args.model)
    print(f"{'case':<28} {'bytes':>11} {'busbw':>6} {'measured us':>11} {'model us':>9}  ratio")
    for r in rows:
        print(
            f"{r.case:<28} {r.buffer_bytes:>11} {r.bus_bandwidth_bytes_per_s / 1e9:>6.1f} "
            f"{r.measured_s * 1e6:>11.1f} {r.model_s * 1e6:>9.1f} {r.ratio:>5.2f}x  "
            f"{r.implementation.partition('/')[2]}"
        )
    print(f"\n{'case':<28} {'all sizes':>24}   {'from 1 MiB':>24}")
    for label, (every, large) in summary(rows).items():
        print(
            f"{label:<28} {every[0]:>3} rows {100 * every[1]:5.1f} % {every[2]:5.2f}x   "
            f"{large[0]:>3} rows {100 * large[1]:5.1f} % {large[2]:5.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
