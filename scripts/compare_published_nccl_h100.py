"""One H100 node's all-reduces under NCCL 2.28.9, with and without NVLink SHARP, against the
published times of an independent benchmark.

Usage: python scripts/compare_published_nccl_h100.py

Source: gabrieldemarmiesse/torch-mojo-backend: PyTorch 2.11 with its NCCL 2.28.9 on 8 x H100
80GB HBM3 SXM (NVSwitch, driver 570, SM clock 1,980 MHz under load), one process per GPU, fp32
buffers (bf16 within 2 %), CUDA-event device time, the median of 5 repetitions of 20
back-to-back calls, in three runs on three nodes:

- agents_docs/mojo_collectives_feasibility.md (2026-09-08, commit 9c4d2eb), section 5.1 "NCCL
  reference, 8 ranks, 1 node" (job 233567), printed in ms to three digits: NCCL's default, which
  its tuning log shows running the ring's LL protocol at 1 MiB and NVLS (Simple, 16 channels)
  from 9 MiB, and ``NCCL_NVLS_ENABLE=0``, the ring: LL at 1 MiB, LL128 at 9-27 MiB, Simple from
  128 MiB;
- agents_docs/mojo_collectives_nvls_results.md (commit 31de5a4), section 6.1 (job 234239), in us
  to one decimal: "NCCL NVLS" (the default) and "NCCL ring" at 1-512 MiB. Its 4 MiB default
  row is left out (the log above does not say whether NCCL ran NVLS or the ring there); at
  1 MiB the default ran the ring's LL, as in the first run. The first run's log is taken for
  the second's sizes (the same NCCL on the same node model); the ring's protocols at 4, 64 and
  256 MiB are not logged and not checked;
- agents_docs/mojo_collectives_kernel_results.md (commit 31de5a4), section 1 (job 233776), in
  us: "NCCL default (NVLS)" and "NCCL ring" from 4 B to 512 MiB (the default, by the same log,
  runs the ring's LL up to 1 MiB). Its rows under 1 MiB are summarised apart: they sit at a
  17.5-20 us floor the model's ring latencies do not reach (timed over 20 back-to-back calls,
  a host slower than the kernel sets the pace, so part of it is PyTorch's per-call cost).

The 9, 27 and 168 MiB buffers are the documents' GPT-2 gradient buckets (9,440,256, 28,317,696
and 176,560,128 bytes); the others whole MiB.

Section 5.5 adds 16 ranks over two such nodes (IB with GPUDirect RDMA; 10 x 400 Gb/s IB HCAs a
node, where ``h100_sxm`` gives 8 NDR NICs), where NCCL ran its NVLS tree (NVLink SHARP inside
each node, a tree between them) from 9 MiB and the tree's LL128 at 1 MiB. The model has no NVLS
tree; those rows run its own choice across nodes (``ranks_per_node`` 8) and are printed apart,
to show what the missing algorithm costs.

Config ``h100_sxm``; the one-node rows run the algorithm NCCL ran (``algorithm: nvls`` where it
ran NVLS, the ring with the protocol left to the model otherwise, whose choice is printed beside
NCCL's). The model's own choice (``algorithm: auto``, which weighs NVLS beside the ring on a
board with an NVLS rate) is printed beside the algorithm NCCL's default ran, size by size.
All held out: the NVLS constants come from Azure's ND H100 v5 curve under NCCL 2.18.5
(``fit_published_nvls.py``), nothing here is fitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratio_summary import Timed, ratio_summary

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.shared.collective_estimate import CollectiveDiagnostics

CONFIG = "h100_sxm"
MIB = 1 << 20
# (buffer bytes, NCCL default: algorithm, protocol, us; NVLS off: protocol, us); None where the
# document does not say (the row is left out) or NCCL's log does not (the protocol is unchecked)
Published = tuple[int, str | None, str | None, float, str | None, float]
RUNS: tuple[tuple[str, tuple[Published, ...]], ...] = (
    ("5.1", (
        (MIB, "ring", "ll", 26, "ll", 33),
        (9_440_256, "nvls", "simple", 87, "ll128", 77),
        (16 * MIB, "nvls", "simple", 121, "ll128", 116),
        (25 * MIB, "nvls", "simple", 169, "ll128", 174),
        (28_317_696, "nvls", "simple", 175, "ll128", 182),
        (128 * MIB, "nvls", "simple", 585, "simple", 698),
        (176_560_128, "nvls", "simple", 751, "simple", 896),
        (512 * MIB, "nvls", "simple", 2146, "simple", 2643),
    )),
    ("6.1", (
        (MIB, "ring", "ll", 25.3, "ll", 30.4),
        (4 * MIB, None, None, 52.7, None, 47.6),
        (9_440_256, "nvls", "simple", 88.4, "ll128", 75.8),
        (16 * MIB, "nvls", "simple", 118.7, "ll128", 117.1),
        (28_317_696, "nvls", "simple", 175.3, "ll128", 183.2),
        (64 * MIB, "nvls", "simple", 323.8, None, 366.4),
        (128 * MIB, "nvls", "simple", 585.7, "simple", 703.8),
        (176_560_128, "nvls", "simple", 748.7, "simple", 903.5),
        (256 * MIB, "nvls", "simple", 1107.6, None, 1354.9),
        (512 * MIB, "nvls", "simple", 2143.4, "simple", 2637.3),
    )),
    ("k1", (
        (4, "ring", "ll", 18.4, "ll", 17.5),
        (256 * 1024, "ring", "ll", 19.9, "ll", 19.5),
        (512 * 1024, "ring", "ll", 19.6, "ll", 19.6),
        (MIB, "ring", "ll", 24.7, "ll", 25.0),
        (9_440_256, "nvls", "simple", 85.8, "ll128", 76.4),
        (28_317_696, "nvls", "simple", 174.9, "ll128", 181.8),
        (176_560_128, "nvls", "simple", 750, "simple", 899),
        (512 * MIB, "nvls", "simple", 2146, "simple", 2636),
    )),
)  # fmt: skip

# two nodes, 16 ranks: (buffer bytes, NCCL's algorithm and protocol, ms)
TWO_NODES = (
    (MIB, "tree-ll128", 0.082),
    (9_440_256, "nvls_tree-simple", 0.221),
    (16 * MIB, "nvls_tree-simple", 0.200),
    (28_317_696, "nvls_tree-simple", 0.259),
    (128 * MIB, "nvls_tree-simple", 0.764),
    (176_560_128, "nvls_tree-simple", 0.946),
    (512 * MIB, "nvls_tree-simple", 2.397),
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(Timed):
    """One published all-reduce time and the model's for the algorithm NCCL ran."""

    buffer_bytes: int
    run: str  # the section: 5.1, 6.1, k1 (kernel results, 1) for one node; 5.5 for two nodes
    column: str  # "default" (NCCL's choice), "nvls off" or "2 nodes"
    nccl: str  # the algorithm and protocol NCCL's log gives ("ring" alone: not logged)
    model: str  # the model's, as its implementation names it


def _name(implementation: str) -> str:
    """``ring-ll128``, ``nvls-simple``: the algorithm and protocol, as NCCL's log names them."""
    name = implementation.partition("/nccl-")[2]
    return "nvls-simple" if name == "nvls" else name


def compare() -> list[Row]:
    """Every published one-node time of the three runs and both columns, effective_roofline."""
    model, hardware = get_model("effective_roofline"), load_hardware(CONFIG)
    rows = []
    for run, published in RUNS:
        for size, algorithm, protocol, us, ring_protocol, ring_us in published:
            columns = [("nvls off", "ring", ring_protocol, ring_us)]
            if algorithm is not None:
                columns.insert(0, ("default", algorithm, protocol, us))
            for column, algo, proto, micro in columns:
                op = ops.collective("all_reduce", size // 4, 8, "fp32", algorithm=algo)
                profile = model.predict(op, hardware)
                nccl = f"{algo}-{proto}" if proto else algo
                rows.append(Row(buffer_bytes=size, run=run, column=column, nccl=nccl,
                                model=_name(profile.implementation), measured_s=micro * 1e-6,
                                model_s=profile.latency_s))  # fmt: skip
    return rows


def two_nodes() -> list[Row]:
    """Section 5.5's 16 ranks over two nodes, under the model's own choice across nodes."""
    model, hardware = get_model("effective_roofline"), load_hardware(CONFIG)
    rows = []
    for size, nccl, ms in TWO_NODES:
        op = ops.collective("all_reduce", size // 4, 16, "fp32", ranks_per_node=8)
        profile = model.predict(op, hardware)
        rows.append(Row(buffer_bytes=size, run="5.5", column="2 nodes", nccl=nccl,
                        model=_name(profile.implementation), measured_s=ms * 1e-3,
                        model_s=profile.latency_s))  # fmt: skip
    return rows


def auto_choices() -> list[tuple[int, str, str]]:
    """(buffer bytes, the algorithm NCCL's default ran, the one ``algorithm: auto`` takes) for
    every size whose default column NCCL's log or the run names, each size once."""
    model, hardware = get_model("effective_roofline"), load_hardware(CONFIG)
    choices: dict[int, tuple[str, str]] = {}
    for _, published in RUNS:
        for size, algorithm, _, _, _, _ in published:
            if algorithm is not None and size not in choices:
                op = ops.collective("all_reduce", size // 4, 8, "fp32")
                taken = model.predict(op, hardware).diagnostics
                assert isinstance(taken, CollectiveDiagnostics)
                choices[size] = (algorithm, taken.algorithm)
    return [(size, nccl, auto) for size, (nccl, auto) in sorted(choices.items())]


def _size(size: int) -> str:
    return f"{size >> 10} KiB" if size >= 1024 else f"{size} B"


def summary(rows: list[Row]) -> dict[str, tuple[int, float, float]]:
    """(count, MAPE, geometric mean) of the NVLS rows, the ring's from 1 MiB and under it."""
    nvls = [r.ratio for r in rows if r.nccl.startswith("nvls")]
    ring = [r for r in rows if r.nccl.startswith("ring")]  # logged protocol or not
    return {
        "nvls": ratio_summary(nvls),
        "ring from 1 MiB": ratio_summary([r.ratio for r in ring if r.buffer_bytes >= MIB]),
        "ring under 1 MiB": ratio_summary([r.ratio for r in ring if r.buffer_bytes < MIB]),
    }


def main() -> int:
    rows, across = compare(), two_nodes()
    print(f"NCCL 2.28.9 on 8 x H100 (torch-mojo-backend's published times) against "
          f"effective_roofline on {CONFIG}")  # fmt: skip
    print(f"{'run':<4} {'bytes':>11} {'column':<9} {'NCCL ran':<16} {'model':<12} "
          f"{'measured us':>11} {'model us':>9}  ratio")  # fmt: skip
    for r in rows + across:
        print(f"{r.run:<4} {r.buffer_bytes:>11} {r.column:<9} {r.nccl:<16} {r.model:<12} "
              f"{r.measured_s * 1e6:>11.1f} {r.model_s * 1e6:>9.1f} {r.ratio:>5.2f}x")  # fmt: skip
    for name, (count, mape, geomean) in summary(rows).items():
        print(f"{name}: {count} rows, MAPE {100 * mape:.1f} %, geomean {geomean:.2f}x")
    logged = [r for r in rows if r.nccl.startswith("ring-")]
    agree, ring = sum(r.model == r.nccl for r in logged), len(logged)
    print(f"the ring's protocol as NCCL's log gives it: {agree} of {ring}")
    choices = auto_choices()
    same = sum(nccl == auto for _, nccl, auto in choices)
    print(
        f"algorithm: auto takes the algorithm NCCL's default ran at {same} of {len(choices)} "
        "sizes: " + ", ".join(f"{_size(size)} {nccl}/{auto}" for size, nccl, auto in choices)
    )
    print("2 nodes (NVLS tree, not modelled): "
          + ", ".join(f"{r.ratio:.2f}x" for r in across))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
