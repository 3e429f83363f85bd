"""The streaming model against published gpu-stream sweeps, from 3 % to 100 % occupancy.

Usage: python scripts/compare_published_streams.py [--rows]

Published figures: gpu-benches by Dominik Ernst (github.com/te42kyfo/gpu-benches), benchmark
``gpu-stream``, GB/s as printed by the benchmark:

- ``a100_40.txt`` (commit a7dc559cc5a1d09e62b6b0fbb99ee165039acba4): an A100 with 40 GB HBM2,
  1555 GB/s (whether SXM4 or PCIe is not stated; both carry the same GA100 and memory). Config
  ``a100_40gb_pcie``.
- ``a40.txt`` (0a45416b2118f4f355cef2af0daa2ec38fe25513): A40. Config ``a40``.
- ``h200.txt`` (fd7091fbb51772fb4401f4a14c80008424fd4ac4): H200. Config ``h200_sxm``.
- README.md's table "Results from a NVIDIA-H100-PCIe / CUDA 11.7"
  (1271e641bbcf81e856b166d6edc802e3799d930b). Config ``h100_pcie``.

The benchmark (gpu-stream/main.cu): one double per thread and no loop, CTAs of ``blockSize``
threads (32 to 1024 in steps of 32), a grid of ``2^27 / blockSize + 1`` CTAs over arrays of
``2^27 + 2`` doubles (1 GiB each), and a shared-memory allocation with a carveout that leaves
two CTAs per SM, so occupancy is ``2 x blockSize`` threads per SM. Each figure is the median of
9 timings of two back-to-back launches; GB/s = streams x ``2^27`` x 8 B / time. Kernels: init
(``A[i] = c``: one store stream), read (``sum = A[i]``: one load stream), scale
(``A[i] = B[i] * c``: a load and a store stream) and triad (``A[i] = B[i] * c + C[i]``: two load
streams and a store stream).

The model: ``effective_roofline``'s streaming evaluation (opmodel.models.streaming.evaluate) of
that structure on the config at its maximum boost clock (the clock ``predict`` gives an unlocked
GPU's streaming kernels): one load per stream per thread, all in flight at once, no store on the
load chain, ``max_resident_ctas_per_sm = 2``. Nothing is fitted. The ratio is predicted over
measured time (measured GB/s over predicted GB/s): above 1, the model is too slow.

No validation dataset of this project takes part; the comparison tests the concurrency law of
the streaming model (latency chains per resident CTA against shared bandwidth, with the loaded
latency of the M/D/1 queue) where occupancy alone sets the bytes in flight.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from types import MappingProxyType

from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.clocking import boosted
from opmodel.hardware.sustained_calibration import with_hbm_fraction
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.kernels import StreamKernel
from opmodel.validation.metrics import error_metrics

ELEMENTS = 2**27 + 2  # gpu-stream's max_buffer_size (doubles per array)
COUNTED = 2**27 + 2  # the elements its GB/s counts per stream
ELEMENT_BYTES = 8
CTAS_PER_SM = 2  # the shared-memory spoiler's carveout
KERNELS = ("init", "read", "scale", "triad")
# kernel -> (load streams, store streams)
STREAMS = MappingProxyType({"init": (0, 1), "read": (1, 0), "scale": (1, 1), "triad": (2, 1)})
BLOCK_SIZES = tuple(range(32, 1025, 32))
# config -> GB/s of (init, read, scale, triad) for each block size in BLOCK_SIZES
# fmt: off
PUBLISHED: MappingProxyType[str, tuple[tuple[int, int, int, int], ...]] = MappingProxyType(
    {
        "a100_40gb_pcie": (
            (159, 81, 151, 210), (407, 158, 291, 403), (601, 230, 406, 558),
            (788, 304, 548, 743), (962, 369, 631, 854), (1142, 439, 746, 1002),
            (1309, 504, 837, 1111), (1473, 579, 954, 1231), (1501, 632, 1019, 1290),
            (1502, 699, 1111, 1332), (1502, 756, 1179, 1331), (1505, 823, 1245, 1346),
            (1501, 869, 1283, 1344), (1503, 928, 1318, 1354), (1502, 970, 1324, 1352),
            (1503, 1042, 1338, 1359), (1503, 1056, 1338, 1359), (1503, 1116, 1346, 1365),
            (1501, 1153, 1348, 1366), (1502, 1203, 1354, 1371), (1503, 1231, 1354, 1371),
            (1502, 1273, 1360, 1375), (1502, 1301, 1360, 1375), (1502, 1341, 1364, 1367),
            (1503, 1357, 1365, 1367), (1503, 1385, 1368, 1367), (1503, 1403, 1369, 1367),
            (1503, 1427, 1373, 1363), (1503, 1437, 1374, 1365), (1501, 1457, 1377, 1363),
            (1502, 1470, 1377, 1363), (1503, 1490, 1381, 1360),
        ),
        # A40: 1536 threads per SM, so two CTAs fit up to 768 threads each
        "a40": (
            (201, 82, 154, 219), (397, 160, 290, 400), (586, 233, 407, 536),
            (679, 304, 514, 625), (679, 371, 575, 643), (679, 435, 615, 659),
            (679, 493, 630, 663), (679, 552, 643, 660), (679, 596, 651, 661),
            (679, 637, 658, 660), (679, 661, 656, 659), (679, 676, 656, 658),
            (679, 679, 657, 658), (679, 679, 656, 658), (678, 679, 655, 657),
            (679, 679, 655, 655), (679, 679, 654, 656), (679, 679, 654, 656),
            (679, 679, 653, 656), (679, 679, 653, 655), (679, 679, 653, 654),
            (679, 679, 654, 655), (679, 679, 653, 655), (679, 679, 652, 653),
        ),
        "h100_pcie": (
            (228, 96, 183, 254), (452, 189, 341, 459), (676, 277, 472, 635),
            (888, 368, 607, 821), (1093, 449, 704, 966), (1301, 533, 817, 1121),
            (1495, 612, 925, 1264), (1686, 702, 1037, 1399), (1832, 764, 1124, 1487),
            (2015, 841, 1213, 1564), (2016, 908, 1295, 1615), (2016, 985, 1378, 1644),
            (2016, 1045, 1439, 1641), (2016, 1116, 1497, 1649), (2016, 1179, 1544, 1655),
            (2017, 1261, 1583, 1675), (2016, 1300, 1591, 1669), (2016, 1362, 1607, 1678),
            (2018, 1416, 1619, 1689), (2016, 1473, 1639, 1712), (2016, 1527, 1638, 1714),
            (2015, 1578, 1644, 1725), (2016, 1624, 1651, 1738), (2016, 1680, 1666, 1755),
            (2015, 1714, 1663, 1758), (2016, 1759, 1668, 1770), (2016, 1795, 1673, 1779),
            (2016, 1837, 1686, 1796), (2018, 1871, 1684, 1800), (2016, 1897, 1688, 1808),
            (2016, 1919, 1693, 1818), (2016, 1942, 1704, 1832),
        ),
        "h200_sxm": (
            (297, 123, 240, 334), (590, 244, 463, 638), (884, 361, 654, 882),
            (1163, 485, 852, 1129), (1428, 588, 977, 1308), (1708, 702, 1120, 1514),
            (1949, 805, 1250, 1705), (2196, 935, 1395, 1905), (2394, 1009, 1506, 2056),
            (2622, 1116, 1632, 2218), (2800, 1208, 1746, 2363), (3016, 1314, 1864, 2503),
            (3191, 1395, 1964, 2620), (3393, 1488, 2064, 2730), (3532, 1571, 2157, 2826),
            (3670, 1707, 2263, 2919), (3815, 1739, 2334, 2987), (3891, 1821, 2417, 3051),
            (3898, 1901, 2495, 3118), (3898, 1996, 2572, 3181), (3896, 2057, 2645, 3225),
            (3898, 2141, 2715, 3265), (3898, 2205, 2780, 3301), (3891, 2297, 2844, 3333),
            (3876, 2336, 2896, 3357), (3891, 2408, 2948, 3379), (3891, 2463, 2997, 3395),
            (3891, 2539, 3042, 3414), (3898, 2587, 3079, 3427), (3891, 2655, 3112, 3447),
            (3898, 2708, 3139, 3481), (3884, 2756, 3165, 3534),
        ),
    }
)
# fmt: on


@dataclass(frozen=True, slots=True)
class StreamRow:
    """One published point and the model's bandwidth for it."""

    hardware: str
    kernel: str
    block_size: int
    occupancy: float  # resident threads over the SM's maximum
    published_gb_per_s: float
    predicted_gb_per_s: float
    limiter: str

    @property
    def ratio(self) -> float:
        """Predicted over measured time (above 1: the model is too slow)."""
        return self.published_gb_per_s / self.predicted_gb_per_s


def datasheet_board(hardware: str) -> HardwareSpec:
    """The config at its boost clock with the datasheet DRAM peak: a sustained HBM fraction
    describes the board a validation set ran on (the A40's, Vidur's board at 0.84 of its
    datasheet), not gpu-benches' boards, which stream at 94-100 % of theirs."""
    return with_hbm_fraction(boosted(load_hardware(hardware)), None)


def predict_gb_per_s(hardware: str, kernel: str, block_size: int) -> tuple[float, str]:
    """The model's GB/s (as gpu-stream counts it) and limiter for one point."""
    spec = datasheet_board(hardware)
    loads, stores = STREAMS[kernel]
    structure = StreamKernel(
        name=f"gpu-stream {kernel}",
        implementation="gpu-stream",
        ctas=ELEMENTS // block_size + 1,
        threads_per_cta=block_size,
        registers_per_thread=16,  # a handful: index, pointers, one value per stream
        elements_per_cta=block_size,
        serial_loads=1 if loads else 0,  # every load of a thread is in flight at once
        global_passes=1,
        reductions=0,
        max_resident_ctas_per_sm=CTAS_PER_SM,
    )
    work = StreamWork(
        read_bytes=loads * ELEMENTS * ELEMENT_BYTES,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=stores * ELEMENTS * ELEMENT_BYTES,
        flops=0,
        vector_flops_per_s=0.0,
    )
    e = evaluate_streaming(structure, spec, work)
    seconds = e.latency_s - e.fixed_s  # gpu-stream times back-to-back launches of long kernels
    return (loads + stores) * COUNTED * ELEMENT_BYTES / seconds / 1e9, e.limiter


def compare() -> list[StreamRow]:
    """Every published point with the model's figure."""
    rows = []
    for hardware, table in PUBLISHED.items():
        sm = load_hardware(hardware).compute.sm
        assert sm is not None
        for block_size, figures in zip(BLOCK_SIZES, table, strict=False):
            occupancy = CTAS_PER_SM * block_size / (sm.max_warps_per_sm * sm.warp_size)
            for kernel, published in zip(KERNELS, figures, strict=True):
                predicted, limiter = predict_gb_per_s(hardware, kernel, block_size)
                rows.append(
                    StreamRow(
                        hardware=hardware,
                        kernel=kernel,
                        block_size=block_size,
                        occupancy=occupancy,
                        published_gb_per_s=float(published),
                        predicted_gb_per_s=predicted,
                        limiter=limiter,
                    )
                )
    return rows


def band(occupancy: float) -> str:
    """The occupancy band a point is reported in."""
    if occupancy <= 0.25:
        return "<= 25 %"
    return "25-50 %" if occupancy <= 0.5 else "> 50 %"


def summary(rows: list[StreamRow]) -> dict[str, tuple[int, float, float]]:
    """(n, MAPE, geometric-mean ratio) per hardware, per hardware and kernel, and per hardware
    and occupancy band."""
    groups: dict[str, list[StreamRow]] = {}
    for r in rows:
        for key in (r.hardware, f"{r.hardware}:{r.kernel}", f"{r.hardware}:{band(r.occupancy)}"):
            groups.setdefault(key, []).append(r)
    out = {}
    for key, members in groups.items():
        m = error_metrics([r.ratio for r in members], [1.0] * len(members))
        out[key] = (m.count, m.mape, m.geomean_ratio)
    return out


@dataclass(frozen=True, slots=True)
class Turnaround:
    """What the 32-thread points say of one GPU: a wave of two 32-thread CTAs per SM takes
    ``init_s`` when each CTA only stores (launch, a store, exit: the CTA turnaround) and
    ``read_s`` when each also waits for one load; ``read_s - init_s`` is then the load's
    round trip, to compare with the config's DRAM latency."""

    hardware: str
    clock_hz: float
    init_s: float
    read_s: float
    config_dram_latency_s: float

    @property
    def init_cycles(self) -> float:
        """The CTA turnaround in SM cycles at the boost clock."""
        return self.init_s * self.clock_hz


def turnaround(hardware: str) -> Turnaround:
    """The 32-thread points of ``hardware`` as a CTA turnaround and a load round trip."""
    spec = datasheet_board(hardware)
    sm = spec.compute.sm
    assert sm is not None
    wave_bytes = CTAS_PER_SM * BLOCK_SIZES[0] * sm.sm_count * ELEMENT_BYTES
    init, read = PUBLISHED[hardware][0][:2]
    return Turnaround(
        hardware=hardware,
        clock_hz=spec.compute.clock_hz,
        init_s=wave_bytes / (init * 1e9),
        read_s=wave_bytes / (read * 1e9),
        config_dram_latency_s=spec.hbm.latency_s,
    )


def main(argv: list[str] | None = None) -> int:
    """Print the comparison (``--rows``: every point)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", action="store_true", help="print every point")
    args = parser.parse_args(argv)
    rows = compare()
    if args.rows:
        print(f"{'hardware':<15}{'kernel':<7}{'block':>6}{'occ':>6}  published  predicted  ratio")
        for r in rows:
            print(
                f"{r.hardware:<15}{r.kernel:<7}{r.block_size:>6}{r.occupancy:>6.2f}  "
                f"{r.published_gb_per_s:9.0f}  {r.predicted_gb_per_s:9.0f}  {r.ratio:5.2f}  "
                f"{r.limiter}"
            )
        print()
    print(f"{'group':<28}{'n':>5}{'MAPE':>8}{'geomean':>9}   (ratio: predicted / measured time)")
    for key, (count, mape, geomean) in summary(rows).items():
        print(f"{key:<28}{count:>5}{100 * mape:>7.1f}%{geomean:>9.3f}")
    print("\n32-thread CTAs, two per SM: time per wave (ns) and the config's DRAM latency")
    print(f"{'hardware':<15}{'init':>7}{'cycles':>8}{'read':>7}{'read-init':>11}{'config':>8}")
    for name in PUBLISHED:
        t = turnaround(name)
        print(
            f"{name:<15}{t.init_s * 1e9:>7.0f}{t.init_cycles:>8.0f}{t.read_s * 1e9:>7.0f}"
            f"{(t.read_s - t.init_s) * 1e9:>11.0f}{t.config_dram_latency_s * 1e9:>8.0f}"
        )
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_streams", main)
