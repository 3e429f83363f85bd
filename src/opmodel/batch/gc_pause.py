"""``paused_gc``: run a loop of predictions without CPython's cyclic garbage collector.

A prediction allocates a few hundred container objects (the op's view, the profile, its
diagnostics, the models' memo entries), and a caller that keeps its ops or profiles keeps
most of them. CPython's collector then runs full (generation 2) collections, each of which
walks every live container, once the long-lived ones have grown by a quarter: their cost per
prediction does not shrink as the heap grows. On the 2-core reference machine, 100,000 fresh
RMSNorm predictions through ``effective_roofline`` whose profiles were kept took 73.8-74.6 µs
each, 42.6-42.7 µs of it in collections; with the collector paused, 46.1-46.7 µs, a final
full collection included in both (``python benchmarks/gc_cost.py``; docs/speed.md, "Garbage
collection").

Pausing is safe for the package's own work: a prediction creates no reference cycles
(``tests/batch/test_gc_pause.py`` predicts every example op with every model on GPU and TPU
configs and finds no cyclic garbage), so reference counting frees everything it drops and
memory is the same with the collector off. Cycles a caller's own code creates inside the
block wait until the collector runs again after it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic garbage collector for the block, and enable it again after it (also
    when the block raises) if it was enabled before; a collector already disabled stays so.

    ``predict_many`` and ``opmodel sweep``'s workers run their loops inside it. Wrap a loop of
    your own ``model.predict`` calls the same way::

        with paused_gc():
            profiles = [model.predict(op, hardware) for op in ops]
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
