"""Liger-Kernel's published LLaMA MLP-block times against effective_roofline, and the B200's
power-limited clock fitted on a declared split of them.

Usage: python scripts/compare_published_mlp.py [--data FILE] [--rows] [--write]

Data: data/blocks/liger_mlp.csv (``python scripts/convert_liger_mlp.py``; data/blocks/SOURCE.md):
forward times of whole MLP blocks, three GEMMs and the activation, and the backward times of
transformers' ``LlamaMLP`` (six GEMMs and the elementwise gradients), timed by Triton's
``do_bench`` on an A100-SXM4-80GB (Liger 0.2.1), a B200 (0.8.0) and a GeForce RTX 4090 (0.6.3),
none clock-locked. Each block is predicted as the sum of its kernels (scripts/liger_mlp.py).

The B200 config carries no power-limited clock from a datasheet, and these are the only
published times of it under sustained PyTorch load: ``do_bench`` runs each block back to back
for its whole measuring window. ``--write`` fits ``power_limited_clock_hz`` (the clock a fully
busy tensor kernel holds, docs/models/effective_roofline.md) on the declared training split,
:data:`SPLIT_DESCRIPTION`, by ``opmodel.validation.power_clock_fit.fit_block_clock_hz`` (15 MHz
bins, least squared relative error, the config without its calibration), and writes
``configs/calibrations/b200_sustained.yaml``. Every other row is held out; the training rows
are printed apart. The A100 and the RTX 4090 are held out entirely: the A100 runs at the clock
its shipped calibration fitted on Azure's published cuBLASLt GEMMs, the RTX 4090 at its rated
boost clock.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from liger_mlp import DATA, Block, block_latency_s, block_ops, gemm_share, load_blocks
from ratio_summary import print_ratio_groups

from opmodel.configs import CALIBRATIONS_DIR
from opmodel.hardware import load_hardware
from opmodel.hardware.sustained_calibration import (
    SustainedCalibration,
    sustained_calibration_text,
)
from opmodel.models import get_model
from opmodel.validation.power_clock_fit import FIT_MODEL, fit_block_clock_hz

CLOCK_HARDWARE = "b200"
SPLIT_MIN_TFLOP = 2.0  # the blocks of 8,192 tokens and more: long enough to hold the power limit
SPLIT_DESCRIPTION = (
    f"the {CLOCK_HARDWARE} forward blocks whose three GEMMs do at least {SPLIT_MIN_TFLOP:g} "
    "TFLOP (8,192 tokens and more, every benchmark and provider)"
)
FITTED_ON = (
    "Liger-Kernel's published LLaMA MLP-block forward times on a B200 (its",
    "all_benchmark_data_cutile.csv, Liger 0.8.0, do_bench back to back;",
    "data/blocks/liger_mlp.csv):",
    SPLIT_DESCRIPTION + ",",
    "each block predicted as its three GEMMs and activation; the other rows held out",
    "(python scripts/compare_published_mlp.py)",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Compared:
    """One block: its published and predicted seconds, the GEMMs' share of the prediction and
    whether it trains the B200's clock."""

    block: Block
    model_s: float
    gemm_share: float
    training: bool

    @property
    def ratio(self) -> float:
        """Predicted over published."""
        return self.model_s / self.block.time_s


def in_split(block: Block) -> bool:
    """Whether ``block`` is one of the B200 clock's training rows."""
    return (
        block.hardware == CLOCK_HARDWARE
        and block.mode == "forward"
        and block.gemm_tflop >= SPLIT_MIN_TFLOP
    )


def fit_clock_hz(blocks: Sequence[Block]) -> float:
    """The B200's power-limited clock on the declared split of ``blocks``."""
    train = [b for b in blocks if in_split(b)]
    if not train:
        raise SystemExit(f"compare_published_mlp: no rows of the split ({SPLIT_DESCRIPTION})")
    spec = load_hardware(CLOCK_HARDWARE, overrides={"sustained_calibration": None})
    return fit_block_clock_hz(spec, [block_ops(b) for b in train], [b.time_s for b in train])


def compare(blocks: Sequence[Block]) -> list[Compared]:
    """Every block under ``effective_roofline`` on its shipped config."""
    model = get_model(FIT_MODEL)
    specs = {name: load_hardware(name) for name in sorted({b.hardware for b in blocks})}
    return [
        Compared(
            b,
            block_latency_s(model, b, specs[b.hardware]),
            gemm_share(model, b, specs[b.hardware]),
            in_split(b),
        )
        for b in blocks
    ]


def write(clock_hz: float, path: Path) -> None:
    """The B200's sustained calibration file."""
    calibration = SustainedCalibration(
        hardware=CLOCK_HARDWARE,
        fitted_on="\n".join(FITTED_ON),
        command="python scripts/compare_published_mlp.py --write",
        power_limited_clock_hz=clock_hz,
    )
    header = (
        "Fitted sustained values, not datasheet values: written by",
        "`python scripts/compare_published_mlp.py --write` (do not edit by hand).",
    )
    path.write_text(sustained_calibration_text(calibration, header))


def _print(rows: Sequence[Compared], every_row: bool) -> None:
    if every_row:
        print(f"{'block':<44} {'published ms':>12} {'model ms':>9}  ratio  GEMM share")
        for r in rows:
            mark = "  (training)" if r.training else ""
            print(f"{r.block.label:<44} {r.block.time_s * 1e3:12.3f} {r.model_s * 1e3:9.3f} "
                  f"{r.ratio:5.2f}x  {100 * r.gemm_share:5.1f} %{mark}")  # fmt: skip
    held = [r for r in rows if not r.training]
    groups: dict[str, list[float]] = {}
    for r in held:
        groups.setdefault(f"{r.block.hardware} {r.block.mode} (held out)", []).append(r.ratio)
    for r in held:  # the backward rows are all huggingface's
        if r.block.mode == "forward":
            name = f"{r.block.hardware} forward {r.block.provider}"
            groups.setdefault(name, []).append(r.ratio)
    training = [r.ratio for r in rows if r.training]
    if training:
        groups[f"{CLOCK_HARDWARE} clock's training rows"] = training
    print_ratio_groups(groups, 38)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the blocks' CSV")
    parser.add_argument("--rows", action="store_true", help="print every block")
    parser.add_argument(
        "--write", action="store_true", help="fit the B200's clock and write its calibration"
    )
    args = parser.parse_args(argv)
    blocks = load_blocks(args.data)
    clock_hz = fit_clock_hz(blocks)
    print(f"{CLOCK_HARDWARE} power-limited clock on {SPLIT_DESCRIPTION}: {clock_hz / 1e6:.0f} MHz")
    if args.write:
        path = CALIBRATIONS_DIR / f"{CLOCK_HARDWARE}_sustained.yaml"
        write(clock_hz, path)
        print(f"wrote {path}")
    _print(compare(blocks), args.rows)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_mlp", main)
