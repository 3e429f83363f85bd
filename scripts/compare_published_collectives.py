"""Collectives across nodes against the bus bandwidths NCCL's maintainers publish.

Usage: python scripts/compare_published_collectives.py [--model effective_roofline]

No timed multi-node collective is in ``data/``; what NCCL's maintainers state for healthy
clusters is the check (docs/models/collective.md, "Groups across nodes"):

- "On an Nvidia DGX-A100 system we have 8x200Gbit/s IB cards and we measure 192GB/s AllReduce
  BusBW" (NVIDIA/nccl issue #812, quoted in #1576): ``a100_80gb_sxm``, all-reduce over 2 and
  4 nodes of 8 GPUs;
- "you should get ~160GB/s intra-node and 24GB/s inter-node" on 8-GPU nodes with one 200 Gb/s
  HDR NIC (NVIDIA/nccl issue #412): ``a100_80gb_sxm`` with one NIC per node, 12 nodes;
- "CX-7 NICs at NDR rate (400Gbps) should achieve up to 48-49GB/s per NIC" (NVIDIA/nccl-tests
  issue #267): ``h100_sxm``, one rank per node over 16 nodes, each through its own NIC.

Each row is an 8 GiB fp32-sized buffer (the size those statements quote, nccl-tests' ``-e 8G``),
and the bus bandwidth is nccl-tests': the bytes each rank sends, ``2 (n - 1) / n x S``, over the
predicted time. The configs' per-NIC rates come from the same maintainers, so the rows test how
the NICs add up and which link binds, not the rates themselves. Nothing is fitted.

Inside one node, one published time (printed after the table): marin-community/marin issue
#6736 (2026-06-28, "H100 NCCL measurements integrated"), an 8-GPU all-reduce of 1 GiB on one
H100 NVLink/NVSwitch host, "~4.06 ms" (PyTorch and NCCL; its algorithm is not stated). It is
compared with NCCL's ring and with NVLink SHARP (attr ``algorithm: nvls``), the default of
recent NCCL versions on such hosts.

NVLink SHARP by group size (printed last): NVIDIA/nccl issue #1455 (2024-09-19), 8 x H100 SXM,
nccl-tests ``NCCL_ALGO=NVLS ./all_reduce_perf -b 2G -e 4G -f 2 -g [gpus]``: bus bandwidth
"about 365-370 GBps when gpus from 2 to 4" (as its ``NCCL_ALGO=RING`` runs, "365-370 GBps when
gpus from 2 to 8"), then "420, 440, 460, and 480 GBps when gpus increase from 4 to 5, 6, 7, and
8". Held out: the model's NVLS loops (:mod:`opmodel.models.effective_roofline.nvls`) give a
group of more ranks fewer loops for the same buffer; the rows compare the bus bandwidth at
2 GiB and 4 GiB for 5-8 ranks under NVLS and for 2-4 ranks under the ring, which the published
2-4 rank runs match (367.5 GB/s, the middle of "365-370", for both).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

EIGHT_GIB = 8 << 30
Case = tuple[str, str, dict[str, int], int, int, float, str]
CASES: tuple[Case, ...] = (
    # (label, config, overrides, ranks, ranks per node, published bus bandwidth, source)
    ("DGX A100, 2 nodes", "a100_80gb_sxm", {}, 16, 8, 192e9, "nccl #812"),
    ("DGX A100, 4 nodes", "a100_80gb_sxm", {}, 32, 8, 192e9, "nccl #812"),
    (
        "8 GPUs and 1 HDR NIC a node, 12 nodes",
        "a100_80gb_sxm",
        {"interconnect.network.nics_per_node": 1},
        96,
        8,
        24e9,
        "nccl #412",
    ),
    ("H100, 1 rank a node, 16 nodes", "h100_sxm", {}, 16, 1, 48.5e9, "nccl-tests #267"),
)


@dataclass(frozen=True, slots=True)
class Row:
    """One published figure and the model's bus bandwidth for its configuration."""

    label: str
    source: str
    published_bytes_per_s: float
    model_bytes_per_s: float
    implementation: str

    @property
    def ratio(self) -> float:
        """Model over published."""
        return self.model_bytes_per_s / self.published_bytes_per_s


def compare(model_name: str = "effective_roofline") -> list[Row]:
    """Every case of :data:`CASES` under ``model_name``."""
    model = get_model(model_name)
    rows = []
    for label, config, overrides, ranks, per_node, published, source in CASES:
        hardware = load_hardware(config, overrides=overrides)
        op = ops.collective("all_reduce", EIGHT_GIB // 4, ranks, "fp32", ranks_per_node=per_node)
        profile = model.predict(op, hardware)
        bus = 2 * (ranks - 1) / ranks * EIGHT_GIB / profile.latency_s
        rows.append(Row(label, source, published, bus, profile.implementation))
    return rows


ONE_GIB = 1 << 30
MARIN_H100_ALL_REDUCE_S = 4.06e-3  # marin #6736: 8 x H100, 1 GiB all-reduce, "~4.06 ms"


def one_node(model_name: str = "effective_roofline") -> list[tuple[str, float, float]]:
    """(algorithm, predicted seconds, ratio to marin's published time) of the 1 GiB all-reduce
    over 8 H100s, under NCCL's ring (the ``auto`` choice inside a node) and NVLink SHARP."""
    model, hardware = get_model(model_name), load_hardware("h100_sxm")
    rows = []
    for algorithm in ("ring", "nvls"):
        op = ops.collective("all_reduce", ONE_GIB // 2, 8, "bf16", algorithm=algorithm)
        seconds = model.predict(op, hardware).latency_s
        rows.append((algorithm, seconds, seconds / MARIN_H100_ALL_REDUCE_S))
    return rows


# NVIDIA/nccl issue #1455: forced NVLS on 8 x H100, 2-4 GiB, bus bandwidth by group size
NVLS_BY_RANKS = {2: 367.5e9, 3: 367.5e9, 4: 367.5e9, 5: 420e9, 6: 440e9, 7: 460e9, 8: 480e9}


def nvls_by_ranks(model_name: str = "effective_roofline") -> list[tuple[int, int, str, float]]:
    """(ranks, buffer bytes, algorithm, model over published bus bandwidth) for NVIDIA/nccl
    issue #1455's forced-NVLS runs: NVLS from 5 ranks, the ring below (what those runs match)."""
    model, hardware = get_model(model_name), load_hardware("h100_sxm")
    rows = []
    for ranks, published in NVLS_BY_RANKS.items():
        algorithm = "nvls" if ranks >= 5 else "ring"
        for size in (2 * ONE_GIB, 4 * ONE_GIB):
            op = ops.collective("all_reduce", size // 4, ranks, "fp32", algorithm=algorithm)
            bus = 2 * (ranks - 1) / ranks * size / model.predict(op, hardware).latency_s
            rows.append((ranks, size, algorithm, bus / published))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="effective_roofline")
    args = parser.parse_args(argv)
    print(f"{'case':<40} {'published':>10} {'model':>10} {'ratio':>6}  implementation  source")
    for row in compare(args.model):
        print(
            f"{row.label:<40} {row.published_bytes_per_s / 1e9:>7.1f} GB/s "
            f"{row.model_bytes_per_s / 1e9:>5.1f} GB/s {row.ratio:>5.2f}x  "
            f"{row.implementation.partition('/')[2]:<15} {row.source}"
        )
    published_ms = MARIN_H100_ALL_REDUCE_S * 1e3
    print(f"\n8 x H100, 1 GiB all-reduce in one node: ~{published_ms:.2f} ms (marin #6736)")
    for algorithm, seconds, ratio in one_node(args.model):
        print(f"  {algorithm:<5} {seconds * 1e3:6.2f} ms  {ratio:5.2f}x")
    print("\nNVLS by group size, 8 x H100, 2 and 4 GiB (NVIDIA/nccl #1455), model / published")
    for ranks, size, algorithm, ratio in nvls_by_ranks(args.model):
        print(f"  {ranks} ranks {size >> 30} GiB {algorithm:<5} {ratio:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
