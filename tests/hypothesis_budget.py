"""How many examples each property test draws.

CI and a plain ``pytest`` run draw each test's base count. A longer hunt for latent bugs
multiplies every count: ``OPMODEL_HYPOTHESIS_SCALE=50 pytest tests/conformance tests/models``.
"""

from __future__ import annotations

import os


def _scale() -> int:
    raw = os.environ.get("OPMODEL_HYPOTHESIS_SCALE", "1")
    try:
        scale = int(raw)
    except ValueError:
        msg = f"OPMODEL_HYPOTHESIS_SCALE must be a positive integer (got {raw!r})"
        raise SystemExit(msg) from None
    if scale < 1:
        msg = f"OPMODEL_HYPOTHESIS_SCALE must be a positive integer (got {raw!r})"
        raise SystemExit(msg)
    return scale


SCALE = _scale()


def examples(base: int) -> int:
    """``base`` examples, times ``OPMODEL_HYPOTHESIS_SCALE``."""
    return base * SCALE
