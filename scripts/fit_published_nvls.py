"""Fit the NVLS loop synchronisation ``tau`` and pipeline fill ``D`` on a published curve.

Usage: python scripts/fit_published_nvls.py

Declared split (docs/validation.md, "Published nccl-tests runs"): training is Azure's ND H100 v5
all-reduce curve (NCCL 2.18.5, NVLS, 8 GPUs; ``compare_published_nccl_tests.CASES``) from
1 MiB, 14 sizes to 8 GiB, where the printed bus bandwidths carry under 0.1 % of rounding;
everything else (its smaller sizes, the ND H200 v5 curve under NCCL 2.20.5, marin's 1 GiB
time) is held out. The fit minimises the mean absolute relative error of the link time
(:func:`opmodel.models.effective_roofline.nvls.nvls_seconds`, the config's
``nvls_bandwidth_bytes_per_s``) over ``tau`` (``tau_8``, the synchronisation of 8 heads, the
curves' ranks) in 0-8 us (0.05 us steps) and ``D`` in 0-6 loops
(0.05 steps), and prints the best pair beside the shipped ``NVLS_LOOP_SYNC_S`` and
``NVLS_FILL_LOOPS``, and the ridge of near-equal fits (``D`` at its best for ``tau`` = 1-5 us).
"""

from __future__ import annotations

import argparse

from compare_published_nccl_tests import CASES, MIB

from opmodel.hardware import load_hardware
from opmodel.models.effective_roofline.nvls import (
    NVLS_FILL_LOOPS,
    NVLS_LOOP_SYNC_S,
    nvls_channels,
    nvls_chunk_bytes,
    nvls_inverse_rate,
    nvls_loop_sync_s,
    nvls_reference_loop_bytes,
    nvls_seconds,
)

TRAINING = "ND H100 v5, 8 GPUs, NVLS"
HELD_OUT = "ND H200 v5, 8 GPUs, NVLS"
_SYNC_GRID_S = tuple(i * 0.05e-6 for i in range(161))  # 0-8 us
_FILL_GRID = tuple(i * 0.05 for i in range(121))  # 0-6 loops


def _curve(label: str) -> tuple[str, int, tuple[tuple[int, float], ...]]:
    """A case's config, ranks and (bytes, seconds) rows."""
    case = next(c for c in CASES if c.label == label)
    return case.config, case.ranks, case.rows


def mape(label: str, sync_s: float, fill_loops: float, smallest_bytes: int = MIB) -> float:
    """Mean |model / measured - 1| of a curve's link times from ``smallest_bytes``."""
    config, ranks, rows = _curve(label)
    hardware = load_hardware(config)
    spec = hardware.interconnect
    rate = spec.nvls_bandwidth_bytes_per_s if spec else None
    assert spec is not None and rate is not None, f"{config} gives no NVLS rate"
    concurrent = nvls_channels(hardware.architecture) * ranks
    reference_sync = nvls_loop_sync_s(spec.devices_per_node, sync_s)
    inverse = nvls_inverse_rate(rate, nvls_reference_loop_bytes(hardware, spec), reference_sync)
    sync = nvls_loop_sync_s(ranks, sync_s)  # tau of the curve's heads, tau_8 = sync_s
    errors = []
    for size, seconds in rows:
        if size >= smallest_bytes:
            placed = (size, concurrent, nvls_chunk_bytes(size, concurrent))
            latency, transfer = nvls_seconds(placed, inverse, sync, fill_loops)
            errors.append(abs((latency + transfer) / seconds - 1))
    return sum(errors) / len(errors)


def fit() -> tuple[float, float, float]:
    """``(tau, D, training MAPE)`` at the grid's best."""
    best = min(
        ((mape(TRAINING, s, d), s, d) for s in _SYNC_GRID_S for d in _FILL_GRID),
        key=lambda t: t[0],
    )
    return best[1], best[2], best[0]


def ridge() -> list[tuple[float, float, float, float]]:
    """``(tau, best D, training MAPE, held-out MAPE from 1 MiB)`` for tau = 1-5 us."""
    out = []
    for sync_us in (1.0, 2.0, 3.0, 4.0, 5.0):
        sync = sync_us * 1e-6
        fill = min(_FILL_GRID, key=lambda d: mape(TRAINING, sync, d))
        out.append((sync, fill, mape(TRAINING, sync, fill), mape(HELD_OUT, sync, fill)))
    return out


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    sync, fill, error = fit()
    print(f"fitted on {TRAINING!r} from 1 MiB: tau = {sync * 1e6:.2f} us, D = {fill:.2f} "
          f"loops, MAPE {100 * error:.1f} %")  # fmt: skip
    print(f"shipped: tau = {NVLS_LOOP_SYNC_S * 1e6:.2f} us, D = {NVLS_FILL_LOOPS:.2f} loops")
    print(f"held out, {HELD_OUT!r} from 1 MiB: {100 * mape(HELD_OUT, sync, fill):.1f} %")
    print("\nthe ridge:   tau     D   training  held out")
    for s, d, train, held in ridge():
        print(f"          {s * 1e6:5.2f}  {d:4.2f}   {100 * train:5.1f} %   {100 * held:5.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
