"""The loaded latency of a memory level: one queueing law for every kernel model.

A memory level answers more slowly the busier it is. The models take the M/D/1 mean response
(Poisson arrivals, constant service; the Pollaczek-Khinchine formula, Kleinrock, "Queueing
Systems", vol. 1, 1975) with the unloaded latency ``L`` as the service time:

    L(rho) = L (2 - rho) / (2 (1 - rho))                     at utilisation rho

Little's law with that latency, ``rate = in_flight / L(rho)`` and ``rho = rate / peak``, has a
closed-form root (:func:`loaded_rate`). Streaming kernels apply the same law to their chains of
dependent loads, whose round trips queue behind the kernel's own traffic (:func:`loaded_chain_s`).
Nothing in it is fitted.
"""

from __future__ import annotations

import math

__all__ = ["loaded_chain_s", "loaded_rate"]


def loaded_rate(peak: float, in_flight: float, latency: float) -> float:
    """Little's law with a loaded latency: ``rate = in_flight / L(rho)``, ``rho = rate / peak``.

    With ``q = in_flight / (latency peak)`` the root is ``rho = 2 q / ((1 + q) + sqrt(1 +
    q^2))``: about ``q`` with little in flight, 0.59 at ``q = 1``, 0.88 at ``q = 4``, and the
    peak only as ``q`` grows. Units are the caller's (bytes per cycle and cycles, or bytes per
    second and seconds); the peak when there is no latency.
    """
    if latency <= 0 or peak <= 0:
        return peak
    q = in_flight / (latency * peak)
    return peak * 2 * q / ((1 + q) + math.sqrt(1 + q * q))


def loaded_chain_s(dram_trips_s: float, other_s: float, dram_s: float) -> float:
    """Chain time whose DRAM round trips (``dram_trips_s`` unloaded) queue behind the kernel's
    own traffic (``dram_s`` at full bandwidth): the root of
    ``t = other + trips (2 - rho) / (2 (1 - rho))``, ``rho = dram_s / t``.

    It lies between ``max(other + trips, dram)`` and their sum
    (docs/models/streaming.md)."""
    total = other_s + dram_s + dram_trips_s
    if total <= 0:
        return 0.0
    # the discriminant (b + D + x)^2 - 2 D (2 b + x) = (b - D)^2 + x^2 + 2 b x, scaled by the
    # total so that it neither cancels nor underflows
    b, d, x = other_s / total, dram_s / total, dram_trips_s / total
    return total * (1 + math.sqrt((b - d) ** 2 + x * x + 2 * b * x)) / 2
