"""Open a data file for reading: every way it can fail is a one-line ConfigError naming it.

The validation and sweep commands read CSV and JSON files that users point them at; a file
that is not UTF-8 text (a binary, a UTF-16 export from a spreadsheet), a folder where a file
was expected, a file without read permission, or a CSV whose quoting runs past the csv
module's field limit must end the command with the file's name and what is wrong, not a
traceback. CSV readers are lazy, so the errors are caught for the whole ``with`` block.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from opmodel.core.errors import ConfigError

__all__ = ["read_json_file", "read_text_file", "text_file"]


@contextmanager
def text_file(path: Path) -> Iterator[TextIO]:
    """``path`` opened as UTF-8 text for reading (``newline=""``, as the csv module wants).

    A leading byte-order mark (spreadsheets' "CSV UTF-8" export writes one) is dropped: kept,
    it would become part of the first column's name, which then reads as missing.

    Inside the block, a decoding error, a malformed CSV (:class:`csv.Error`) or an OS error
    becomes ``ConfigError(["PATH: ..."])``; other exceptions pass through unchanged.
    """
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            yield handle
    except FileNotFoundError:
        raise ConfigError([f"{path}: file not found"]) from None
    except IsADirectoryError:
        raise ConfigError([f"{path}: is a directory, expected a file"]) from None
    except UnicodeDecodeError as exc:
        where = f"byte {exc.start}: {exc.reason}"
        raise ConfigError([f"{path}: not UTF-8 text ({where}); save it as UTF-8"]) from None
    except csv.Error as exc:
        raise ConfigError([f"{path}: malformed CSV ({exc})"]) from None
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read ({exc.strerror or exc})"]) from None


def read_text_file(path: Path) -> str:
    """The whole of ``path`` as UTF-8 text; ConfigError naming the file when it cannot be read
    (:func:`text_file`)."""
    with text_file(path) as handle:
        return handle.read()


def read_json_file(path: Path) -> Any:
    """The JSON value in ``path``; ConfigError naming the file, the line and what is wrong when
    it cannot be read or is not JSON. The caller checks the value's shape."""
    text = read_text_file(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError([f"{path}: not JSON ({exc.msg}, line {exc.lineno})"]) from None
