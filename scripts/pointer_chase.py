"""Load-to-use latency of an NVIDIA GPU's L2 and DRAM by pointer chasing (CuPy, on the GPU).

Usage (on a machine with a CUDA GPU and CuPy; nothing of opmodel is needed):

    python scripts/pointer_chase.py --output chase.json [--device 0] [--hops 20000]
        [--survival-fractions 0.2,...,2.0 | none]

One thread per CTA follows a chain of 4-byte indices, each hop a load whose address is the
value the previous load returned, so hops cannot overlap: ``cycles / hops`` is the latency of
one load. Loads are ``ld.global.cg`` (cached in L2, not in L1). Each element sits on its own
128-byte line and the chain visits the lines of its region in a random order (a random cyclic
permutation), so neither sector reuse nor a prefetcher shortens a hop. Every chain is walked
once untimed first (it warms the L2 or the TLB), then timed with ``clock64`` (SM cycles) and,
for the whole launch, CUDA events (ns).

Tests:

- ``l2_per_sm``: one CTA per SM, each on its own 128 KiB region (all regions together fit in
  the L2): an L2 hit seen from every SM, near and far partitions mixed by the address hash.
- ``l2_<size>``: one CTA, one region of 4, 16 or 32 MiB: hits over a footprint that fills more
  of the L2.
- ``dram_random``: one CTA over 1 GiB in random order: DRAM latency with TLB misses.
- ``dram_page_local``: one CTA over 1 GiB, the 2 MiB pages in order and the lines of each page
  in random order: DRAM latency with few TLB misses.
- ``survival_one_sm_<f>`` and ``survival_all_sms_<f>`` (``--survival-fractions``; ``<f>`` is the
  region as a percentage of the L2 the driver reports): one CTA, or one CTA on every SM, walks
  the whole chain of a region once, all on the same lines; then one CTA walks its first lines
  again, timed. Each timed line was last touched one pass earlier, the region's bytes of other
  lines ago, so the timed cycles say which share of them the L2 kept over that reuse
  distance: its replacement law, which ``scripts/l2_survival_report.py`` reads. Warmed from
  every SM, the lines are read from both L2 partitions (the near/far replication).

The JSON has per test the region bytes, hops, cycles per hop (median, min and max over CTAs)
and ns per hop from the events (a survival test: the timed walk's cycles per hop, the warm
walk's median and SM ids, the region's fraction of the L2), plus the GPU name, the L2 size and
the SM clock NVML read before and after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_LINE_WORDS = 32  # 128-byte lines of 4-byte words
_PAGE_BYTES = 2 * 2**20
# regions of the survival sweep, as fractions of the L2 the driver reports; dense around half of
# it, the share one partition's data gets where the two partitions replicate (docs/measure.md)
_SURVIVAL_FRACTIONS = "0.2,0.3,0.4,0.45,0.5,0.55,0.6,0.7,0.8,1.0,1.25,1.5,2.0"

_SOURCE = r"""
extern "C" __global__ void chase(const unsigned int* __restrict__ chain,
                                 unsigned long long region_words, unsigned int start_word,
                                 int hops, int timed,
                                 unsigned long long* cycles, unsigned int* smid_out,
                                 unsigned int* sink) {
    if (threadIdx.x != 0) return;
    const unsigned int* base = chain + region_words * blockIdx.x;
    unsigned int p = start_word;
    unsigned int v;
    long long start = clock64();
    for (int i = 0; i < hops; ++i) {
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(base + p));
        p = v;
    }
    long long stop = clock64();
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (timed) {
        cycles[blockIdx.x] = (unsigned long long)(stop - start);
        smid_out[blockIdx.x] = smid;
    }
    sink[blockIdx.x] = p;
}
"""


def _chain(np: Any, lines: int, rng: Any, page_lines: int | None) -> Any:
    """Word array of one region: line ``i``'s first word holds the word index of the next."""
    if page_lines is None:
        order = rng.permutation(lines)
    else:
        pages = [
            start + rng.permutation(min(page_lines, lines - start))
            for start in range(0, lines, page_lines)
        ]
        order = np.concatenate(pages)
    words = np.zeros(lines * _LINE_WORDS, dtype=np.uint32)
    words[order * _LINE_WORDS] = (np.roll(order, -1) * _LINE_WORDS).astype(np.uint32)
    return words


@dataclass(frozen=True, slots=True)
class _Walk:
    """One test's chains on the GPU and how to walk them."""

    chain: Any
    region_words: int
    ctas: int
    hops: int
    cold: bool  # a DRAM test: time lines the untimed walk did not visit


def _run(cp: Any, kernel: Any, walk: _Walk) -> dict[str, Any]:
    """Walk untimed, then timed. An L2 test's untimed walk covers its whole region (every
    line in L2 before timing); a DRAM test's timed walk continues where the untimed one
    stopped, on lines not yet visited."""
    chain, region_words, ctas, hops, cold = (
        walk.chain,
        walk.region_words,
        walk.ctas,
        walk.hops,
        walk.cold,
    )
    cycles = cp.zeros(ctas, dtype=cp.uint64)
    smid = cp.zeros(ctas, dtype=cp.uint32)
    sink = cp.zeros(ctas, dtype=cp.uint32)
    words = cp.uint64(region_words)
    warm_hops = hops if cold else max(hops, region_words // _LINE_WORDS)
    kernel(
        (ctas,),
        (32,),
        (chain, words, cp.uint32(0), cp.int32(warm_hops), cp.int32(0), cycles, smid, sink),
    )
    cp.cuda.Device().synchronize()
    start_word = int(cp.asnumpy(sink)[0]) if cold else 0
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    kernel(
        (ctas,),
        (32,),
        (chain, words, cp.uint32(start_word), cp.int32(hops), cp.int32(1), cycles, smid, sink),
    )
    stop.record()
    stop.synchronize()
    per_hop = [float(c) / hops for c in cp.asnumpy(cycles)]
    return {
        "ctas": ctas,
        "hops": hops,
        "warm_hops": warm_hops,
        "region_bytes": region_words * 4,
        "cycles_per_hop_median": statistics.median(per_hop),
        "cycles_per_hop_min": min(per_hop),
        "cycles_per_hop_max": max(per_hop),
        "ns_per_hop_events": cp.cuda.get_elapsed_time(start, stop) * 1e6 / hops,
        "sm_ids": sorted(int(s) for s in cp.asnumpy(smid)),
    }


def _survival(cp: Any, kernel: Any, chain: Any, warm_ctas: int, hops: int) -> dict[str, Any]:
    """``warm_ctas`` CTAs walk the whole cycle of one region (every CTA on the same lines), then
    one CTA walks its first ``hops`` lines again, timed (module docstring). The warm walk is
    timed too: its cycles per hop (cold lines) and SM ids are reported beside the timed ones."""
    lines = int(chain.size) // _LINE_WORDS
    cycles = cp.zeros(warm_ctas, dtype=cp.uint64)
    smid = cp.zeros(warm_ctas, dtype=cp.uint32)
    sink = cp.zeros(warm_ctas, dtype=cp.uint32)
    same_lines = cp.uint64(0)  # every CTA's region starts at the chain's first word
    kernel(
        (warm_ctas,),
        (32,),
        (chain, same_lines, cp.uint32(0), cp.int32(lines), cp.int32(1), cycles, smid, sink),
    )
    cp.cuda.Device().synchronize()
    warm_per_hop = [float(c) / lines for c in cp.asnumpy(cycles)]
    warm_sms = sorted(int(s) for s in cp.asnumpy(smid))
    kernel(
        (1,),
        (32,),
        (chain, same_lines, cp.uint32(0), cp.int32(hops), cp.int32(1), cycles, smid, sink),
    )
    cp.cuda.Device().synchronize()
    return {
        "ctas": 1,
        "warm_ctas": warm_ctas,
        "hops": hops,
        "warm_hops": lines,
        "region_bytes": lines * _LINE_WORDS * 4,
        "cycles_per_hop_median": float(cp.asnumpy(cycles)[0]) / hops,
        "warm_cycles_per_hop_median": statistics.median(warm_per_hop),
        "sm_ids": [int(cp.asnumpy(smid)[0])],
        "warm_sm_ids": warm_sms,
    }


def _fractions(text: str) -> list[float]:
    """``--survival-fractions``: comma-separated fractions of the L2 in (0, 8], or ``none``."""
    if text.strip() == "none":
        return []
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(0 < v <= 8 for v in values):
        raise argparse.ArgumentTypeError(
            f"comma-separated fractions of the L2 in (0, 8], or none (got {text!r})"
        )
    return values


def _sweep(cp: Any, np: Any, kernel: Any, setup: dict[str, Any], args: Any) -> None:
    """The survival sweep into ``setup["results"]``: a region per fraction of the L2, warmed
    from one SM and from every SM."""
    results, rng = setup["results"], setup["rng"]
    for fraction in args.survival_fractions:
        lines = max(8, round(fraction * results["l2_bytes"] / (4 * _LINE_WORDS)))
        chain = cp.asarray(_chain(np, lines, rng, None))
        hops = min(args.hops, lines // 8)  # the timed walk re-touches an eighth at most
        for who, warm_ctas in (("one_sm", 1), ("all_sms", results["sms"])):
            name = f"survival_{who}_{round(fraction * 100):03d}"
            results["tests"][name] = {
                **_survival(cp, kernel, chain, warm_ctas, hops),
                "l2_fraction": fraction,
                "sm_clock_mhz": setup["sm_clock"](),
            }
            print(name, json.dumps(results["tests"][name]["cycles_per_hop_median"]))
        del chain


def main(argv: list[str] | None = None) -> int:
    """Run the tests and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--hops", type=int, default=20000)
    parser.add_argument("--dram-bytes", type=int, default=2**30, help="DRAM tests' region")
    parser.add_argument(
        "--survival-fractions",
        type=_fractions,
        default=_fractions(_SURVIVAL_FRACTIONS),
        help=f"regions of the L2 survival sweep as fractions of the L2 (default "
        f"{_SURVIVAL_FRACTIONS}; none skips it)",
    )
    args = parser.parse_args(argv)
    if args.hops < 1 or args.dram_bytes < _PAGE_BYTES:
        parser.error(
            f"--hops >= 1 and --dram-bytes >= {_PAGE_BYTES} (got {args.hops}, {args.dram_bytes})"
        )
    import cupy as cp  # type: ignore[import-not-found]  # noqa: PLC0415 - GPU machine only
    import numpy as np  # noqa: PLC0415
    import pynvml  # noqa: PLC0415

    cp.cuda.Device(args.device).use()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(args.device)

    def sm_clock() -> int:
        return int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))

    kernel = cp.RawKernel(_SOURCE, "chase")
    props = cp.cuda.runtime.getDeviceProperties(args.device)
    sms = int(props["multiProcessorCount"])
    rng = np.random.default_rng(1)
    results: dict[str, Any] = {
        "gpu": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "sms": sms,
        "l2_bytes": int(props["l2CacheSize"]),
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "sm_clock_mhz_before": sm_clock(),
        "tests": {},
    }
    tests: list[tuple[str, int, int, int | None, int]] = [
        ("l2_per_sm", 128 * 2**10, sms, None, args.hops),
        ("l2_4mib", 4 * 2**20, 1, None, args.hops),
        ("l2_16mib", 16 * 2**20, 1, None, args.hops),
        ("l2_32mib", 32 * 2**20, 1, None, args.hops),
        ("dram_random", args.dram_bytes, 1, None, args.hops),
        ("dram_page_local", args.dram_bytes, 1, _PAGE_BYTES // (4 * _LINE_WORDS), args.hops),
    ]
    for name, region_bytes, ctas, page_lines, hops in tests:
        lines = region_bytes // (4 * _LINE_WORDS)
        host = np.concatenate([_chain(np, lines, rng, page_lines) for _ in range(ctas)])
        chain = cp.asarray(host)
        results["tests"][name] = {
            **_run(
                cp,
                kernel,
                _Walk(chain, lines * _LINE_WORDS, ctas, hops, cold=name.startswith("dram")),
            ),
            "sm_clock_mhz": sm_clock(),
        }
        del chain
        print(name, json.dumps({k: v for k, v in results["tests"][name].items() if k != "sm_ids"}))
    _sweep(cp, np, kernel, {"results": results, "rng": rng, "sm_clock": sm_clock}, args)
    results["sm_clock_mhz_after"] = sm_clock()
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
