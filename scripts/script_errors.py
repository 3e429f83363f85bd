"""How the scripts of this folder end: one line per problem, no traceback.

``python scripts/<name>.py`` puts this folder first on ``sys.path``, so a script imports this
module in its ``__main__`` block (tests that load a script as a module never run that block).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NoReturn

from opmodel.core.errors import OpModelError


def run(name: str, main: Callable[[], int]) -> NoReturn:
    """Exit with ``main()``'s status; a bad data, config or calibration file (OpModelError)
    or path (OSError: an output in a missing folder, say) exits 1 with ``name: ...`` lines."""
    try:
        raise SystemExit(main())
    except OpModelError as exc:
        sys.exit("\n".join(f"{name}: {line}" for line in str(exc).splitlines()))
    except OSError as exc:
        sys.exit(f"{name}: {exc.filename}: {exc.strerror or exc}")


def require_sources(name: str, shared: Path, sources: Iterable[str]) -> None:
    """Exit 1 in one line when one of ``sources`` (paths under ``--shared-dir``) is missing,
    before a converter writes anything: a wrong folder must not leave empty tables behind."""
    for source in sources:
        if not (shared / source).exists():
            sys.exit(f"{name}: --shared-dir {shared}: no {source} (../shared/data holds them)")
