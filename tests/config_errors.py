"""A malformed file's load fails with one line naming the file and what is wrong."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from opmodel.core.errors import ConfigError


def assert_one_line_error(
    load: Callable[[Path], Any], folder: Path, text: str, message: str
) -> None:
    """Write ``text`` to a file in ``folder``; ``load`` of it raises a one-line ConfigError
    that names the file and holds ``message``."""
    path = folder / "malformed.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert "\n" not in str(info.value)
