"""scripts/write_accuracy_table.py: a data folder that is not there ends in one line naming
it, before the shipped table is touched (tests/validation/test_accuracy_table.py checks what
the script writes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.report.accuracy import TABLE_PATH
from tests.scripts.loader import load_script


def test_a_missing_data_folder_is_one_line(tmp_path: Path) -> None:
    before = TABLE_PATH.read_bytes()
    with pytest.raises(SystemExit) as raised:
        load_script("write_accuracy_table").main(["--data-dir", str(tmp_path / "nowhere")])
    message = str(raised.value)
    assert message.startswith("write_accuracy_table.py: ") and "not a directory" in message
    assert "\n" not in message and TABLE_PATH.read_bytes() == before
