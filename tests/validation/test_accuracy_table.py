"""The accuracy table ``opmodel predict --format text`` quotes
(``configs/accuracy/measured_error.json``) is what the validations report today: rerun
``opmodel validate-gemm-latency`` (extended_roofline and effective_roofline) and ``opmodel
validate-ops`` (effective_roofline) on
``data/`` and compare. When a model change moves a figure this fails until
``python scripts/write_accuracy_table.py`` rewrites the table."""

from __future__ import annotations

import json

from opmodel.report.accuracy import TABLE_PATH
from opmodel.validation.accuracy_table import accuracy_table

from ..conftest import REPO


def test_the_shipped_table_is_current() -> None:
    shipped = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    current = json.loads(accuracy_table(REPO / "data"))
    stale = [row for row in current["rows"] if row not in shipped["rows"]]
    gone = [row for row in shipped["rows"] if row not in current["rows"]]
    assert not stale and not gone, (
        f"configs/accuracy/measured_error.json is stale ({len(stale)} rows changed or new, "
        f"{len(gone)} gone): run python scripts/write_accuracy_table.py"
    )
    assert shipped == current
