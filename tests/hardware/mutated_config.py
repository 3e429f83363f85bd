"""A shipped config as plain YAML data, changed field by field, for the loader's error tests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from opmodel import ConfigError
from opmodel.hardware import load_hardware, shipped_config_path


def base_config() -> dict[str, Any]:
    data = yaml.safe_load(shipped_config_path("gpu_generic").read_text())
    assert isinstance(data, dict)
    return data


def set_field(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def apply(data: dict[str, Any]) -> None:
        node: Any = data
        *parents, last = path.split(".")
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if value is DELETE:
            del node[int(last) if last.isdigit() else last]
        else:
            node[int(last) if last.isdigit() else last] = value

    return apply


DELETE = object()


def assert_problems(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    """``gpu_generic`` changed by ``mutate`` fails to load with exactly ``expected``, in order."""
    data = copy.deepcopy(base_config())
    mutate(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as info:
        load_hardware(path)
    assert list(info.value.problems) == [f"{path}: {line}" for line in expected]
