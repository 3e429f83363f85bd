"""Plausible spans of the physical fields of hardware configs and calibration files.

Each constant is field metadata (:func:`opmodel.parsing.schema.plausible`): the field's sign
check and a span in its SI unit. The spans are wide, one to several orders of magnitude beyond
any shipped or announced accelerator on either side, so that they reject only values typed in
another unit (a clock of ``1.98`` meant as GHz, a bandwidth of ``3350`` meant as GB/s, a latency
of ``600`` meant as ns or cycles, an energy of ``5`` meant as pJ) or large enough to overflow
the models' arithmetic (``1e308``). The shipped configs span, for comparison: clocks
1.05-2.52 GHz, memory bandwidths 0.6 TB/s-550 PB/s (a register file's aggregate), latencies
0-600 ns, energies 1e-13 to 6e-10 J per FLOP or byte, level sizes 6 MiB-192 GiB, boards
20-1,200 W, 72-304 SMs.
"""

from __future__ import annotations

from opmodel.parsing.schema import Check, Plausible, plausible

__all__ = [
    "BYTES_PER_CYCLE",
    "BYTES_PER_S",
    "CLOCK_HZ",
    "CLOCK_HZ_SPAN",
    "CLOCK_MHZ",
    "COUNT",
    "CYCLES",
    "FLOPS_PER_CYCLE",
    "FLOPS_PER_S",
    "J_PER_BYTE",
    "J_PER_FLOP",
    "LATENCY_CYCLES",
    "LATENCY_S",
    "LEVEL_BYTES",
    "MILLIVOLTS",
    "ON_CHIP_BYTES",
    "ON_CHIP_RESERVE_BYTES",
    "POWER_W",
    "REGISTERS",
    "TDP_W",
    "TIME_PER_KERNEL_S",
]

# 10 MHz to 100 GHz: a clock typed in GHz (1.98) or MHz (1,980) falls below
CLOCK_HZ_SPAN = Plausible(1e7, 1e11, "Hz")
CLOCK_HZ = plausible(Check.POSITIVE, CLOCK_HZ_SPAN.low, CLOCK_HZ_SPAN.high, "Hz")
CLOCK_MHZ = plausible(Check.POSITIVE, 10, 1e5, "MHz")
FLOPS_PER_S = plausible(Check.POSITIVE, 1e6, 1e19, "FLOP/s")
FLOPS_PER_CYCLE = plausible(Check.POSITIVE, 1, 1e7, "FLOP per cycle")
# 1 µJ per FLOP or byte is a million times any real engine or memory: an energy typed in pJ
J_PER_FLOP = plausible(Check.NON_NEGATIVE, 0, 1e-6, "J/FLOP")
J_PER_BYTE = plausible(Check.NON_NEGATIVE, 0, 1e-6, "J/byte")
# a memory level of under 1 KiB or over 1 PB: a size typed in KB, MB or GB is below
LEVEL_BYTES = plausible(Check.POSITIVE, 1024, 1e15, "bytes")
# 1 MB/s to 1 EB/s: a bandwidth typed in GB/s (3,350) is below
BYTES_PER_S = plausible(Check.POSITIVE, 1e6, 1e18, "bytes/s")
BYTES_PER_CYCLE = plausible(Check.POSITIVE, 1, 1e7, "bytes per cycle")
# 10 ms: a latency typed in ns or cycles (600) is above
LATENCY_S = plausible(Check.NON_NEGATIVE, 0, 1e-2, "s")
# host or device time per kernel, at most 10 ms: one typed in µs (5) is above
TIME_PER_KERNEL_S = plausible(Check.NON_NEGATIVE, 0, 1e-2, "s")
POWER_W = plausible(Check.NON_NEGATIVE, 0, 1e6, "W")
# a device of under 1 W or over 1 MW (a 72-GPU rack described as one device draws 120 kW): a
# TDP typed in kW (0.7) is below
TDP_W = plausible(Check.POSITIVE, 1, 1e6, "W")
MILLIVOLTS = plausible(Check.POSITIVE, 10, 1e4, "mV")
CYCLES = plausible(Check.NON_NEGATIVE, 0, 1e8, "cycles")
LATENCY_CYCLES = plausible(Check.POSITIVE, 1, 1e6, "cycles")
# counts of units (SMs, SMSPs, lanes, CTAs, warps, threads, MXUs)
COUNT = plausible(Check.POSITIVE, 1, 1e6, "")
REGISTERS = plausible(Check.POSITIVE, 1, 1e9, "registers")
ON_CHIP_BYTES = plausible(Check.POSITIVE, 1, 1e10, "bytes")
ON_CHIP_RESERVE_BYTES = plausible(Check.NON_NEGATIVE, 0, 1e10, "bytes")
