"""Which share of its lines an L2 keeps over a reuse distance, read from a pointer-chase JSON,
beside the three laws opmodel uses for it.

Usage:

    python scripts/l2_survival_report.py CHASE.json --hardware h200_sxm [--format json]

``CHASE.json`` is the output of ``scripts/pointer_chase.py``. Every one-CTA test over a region
that was walked whole before its timed walk (``l2_<n>mib`` and the ``survival_*`` sweep) is a
point: each timed line was last touched one pass earlier, ``S`` (the region's bytes) of other
lines ago. Its cycles per hop ``c`` lie between an L2 hit ``c_hit`` (the ``l2_4mib`` test,
which fits in any L2 this applies to) and a DRAM load ``c_miss`` (``dram_page_local``, few TLB
misses), so the share of the timed lines the L2 still held is

    kept = clamp((c_miss - c) / (c_miss - c_hit), 0, 1).

The laws, each at the config's shared L2 capacity ``C`` (``MemoryLevel.shared_capacity_bytes``):

- ``lru``: least-recently-used, a line survives ``S`` bytes of other lines while ``S < C``
  (``producer_output_survival``: what the streaming models read of a producer's output);
- ``ramp``: ``1 - clamp((S - C) / C, 0, 1)``, the GEMM traffic model's reuse between stripes and
  waves (``capacity_miss_fraction``);
- ``random``: ``exp(-S / C)``, random replacement (``dirty_write_back_bytes``: a flush's dirty
  lines).

Nothing is fitted. The table says how far each law is from each point and, over all points,
the mean absolute difference in kept share.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.models.gemm.traffic import capacity_miss_fraction
from opmodel.models.shared.l2_survival import dirty_write_back_bytes, producer_output_survival

HIT_TEST = "l2_4mib"
MISS_TEST = "dram_page_local"
_POINT = re.compile(r"^(l2_\d+mib|survival_(one_sm|all_sms)_\d+)$")
LAWS = ("lru", "ramp", "random")


class ReportError(Exception):
    """A chase file this report cannot read; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class Point:
    """One region's measured share of lines kept, and each law's share at its reuse distance."""

    test: str
    warmed_by: str  # "one SM" or "all SMs"
    region_bytes: int
    distance_over_capacity: float  # S / C
    cycles_per_hop: float
    kept: float
    lru: float
    ramp: float
    random: float


def laws(region_bytes: float, capacity_bytes: float) -> dict[str, float]:
    """Each law's share of lines kept over ``region_bytes`` of other lines (module docstring)."""
    return {
        "lru": producer_output_survival(region_bytes, region_bytes, capacity_bytes),
        "ramp": 1.0 - capacity_miss_fraction(region_bytes, round(capacity_bytes)),
        "random": 1.0
        - dirty_write_back_bytes(capacity_bytes, region_bytes, capacity_bytes) / capacity_bytes,
    }


def _cycles(tests: dict[str, Any], name: str, path: Path) -> float:
    """A test's median cycles per hop, or a one-line error naming the file and the field."""
    try:
        value = float(tests[name]["cycles_per_hop_median"])
    except (KeyError, TypeError, ValueError):
        raise ReportError(
            f"{path}: tests.{name}.cycles_per_hop_median: missing or not a number "
            "(run scripts/pointer_chase.py, which writes it)"
        ) from None
    if not 0 < value < math.inf:
        raise ReportError(f"{path}: tests.{name}.cycles_per_hop_median: must be > 0 (got {value})")
    return value


def points(chase: dict[str, Any], path: Path, capacity_bytes: float) -> list[Point]:
    """Every survival point of a chase JSON, in the order of its region size."""
    tests = chase.get("tests")
    if not isinstance(tests, dict):
        raise ReportError(f"{path}: tests: missing (not a scripts/pointer_chase.py output)")
    hit, miss = _cycles(tests, HIT_TEST, path), _cycles(tests, MISS_TEST, path)
    if miss <= hit:
        raise ReportError(
            f"{path}: tests.{MISS_TEST}: a DRAM load ({miss:.0f} cycles) must take longer than "
            f"an L2 hit ({hit:.0f} cycles, tests.{HIT_TEST})"
        )
    found = []
    for name in sorted(tests):
        if not _POINT.match(name) or name == HIT_TEST:
            continue
        try:
            region = int(tests[name]["region_bytes"])
        except (KeyError, TypeError, ValueError):
            raise ReportError(
                f"{path}: tests.{name}.region_bytes: missing or not an integer"
            ) from None
        cycles = _cycles(tests, name, path)
        kept = min(1.0, max(0.0, (miss - cycles) / (miss - hit)))
        all_sms = int(tests[name].get("warm_ctas", 1)) > 1
        found.append(
            Point(
                test=name,
                warmed_by="all SMs" if all_sms else "one SM",
                region_bytes=region,
                distance_over_capacity=region / capacity_bytes,
                cycles_per_hop=cycles,
                kept=kept,
                **laws(region, capacity_bytes),
            )
        )
    if not found:
        raise ReportError(f"{path}: tests: no l2_<n>mib or survival_* test to read")
    return sorted(found, key=lambda p: (p.warmed_by, p.region_bytes))


def mean_differences(found: list[Point]) -> dict[str, float]:
    """Each law's mean |kept share - law's share| over the points."""
    return {law: sum(abs(p.kept - getattr(p, law)) for p in found) / len(found) for law in LAWS}


def _table(found: list[Point], hardware: str, capacity_bytes: float) -> str:
    lines = [
        f"L2 kept over one pass of S bytes ({hardware}: shared capacity C = "
        f"{capacity_bytes / 2**20:.1f} MiB)",
        f"{'test':24} {'warmed by':9} {'S MiB':>7} {'S/C':>5} {'cycles':>7} {'kept':>5} "
        f"{'lru':>5} {'ramp':>5} {'random':>6}",
    ]
    for p in found:
        lines.append(
            f"{p.test:24} {p.warmed_by:9} {p.region_bytes / 2**20:7.1f} "
            f"{p.distance_over_capacity:5.2f} {p.cycles_per_hop:7.1f} {p.kept:5.2f} "
            f"{p.lru:5.2f} {p.ramp:5.2f} {p.random:6.2f}"
        )
    means = mean_differences(found)
    lines.append("mean |kept - law|: " + ", ".join(f"{k} {v:.2f}" for k, v in means.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the report; bad input is a one-line error and exit status 2."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chase", type=Path, help="scripts/pointer_chase.py output")
    parser.add_argument("--hardware", required=True, help="config whose L2 capacity to use")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    args = parser.parse_args(argv)
    try:
        capacity = load_hardware(args.hardware).level("l2").shared_capacity_bytes
        try:
            chase = json.loads(args.chase.read_text())
        except (OSError, ValueError) as exc:
            raise ReportError(f"{args.chase}: cannot read a JSON file ({exc})") from None
        if not isinstance(chase, dict):
            raise ReportError(f"{args.chase}: expected a JSON object")
        found = points(chase, args.chase, capacity)
    except (ReportError, OpModelError) as exc:
        print(f"l2_survival_report: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        payload = {
            "hardware": args.hardware,
            "shared_capacity_bytes": capacity,
            "points": [asdict(p) for p in found],
            "mean_abs_difference": mean_differences(found),
        }
        print(json.dumps(payload, indent=2))
    else:
        print(_table(found, args.hardware, capacity))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
