"""Error types and the one error-message helper used across opmodel.

Every error the library raises for bad input derives from :class:`OpModelError` and renders as
one line per problem: ``where: field.path: problem (got X)``. The CLI prints ``str(error)`` and
exits with status 2, so a message must be complete on its own.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "ConfigError",
    "InvalidKernelError",
    "OpModelError",
    "OpValidationError",
    "UnknownNameError",
    "UnsupportedDTypeError",
    "UnsupportedOpError",
    "did_you_mean",
    "located",
    "shown",
]


class OpModelError(Exception):
    """Base class of every error opmodel raises on purpose."""


class ConfigError(OpModelError, ValueError):
    """A hardware or op file is unreadable or invalid; ``problems`` holds one line per issue."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__("\n".join(self.problems))

    def __reduce__(self) -> tuple[type[ConfigError], tuple[tuple[str, ...]]]:
        # rebuilt from its problems: the default passes the joined message as ``problems``
        return (type(self), (self.problems,))


class OpValidationError(OpModelError, ValueError):
    """A :class:`~opmodel.LocalOp` or :class:`~opmodel.TensorSpec` is malformed."""


class InvalidKernelError(OpModelError, ValueError):
    """Kernel parameters (tiles, warps, stages, registers) that cannot run on the hardware."""


class UnsupportedOpError(OpModelError):
    """A model was asked to predict an op kind it does not model."""


class UnsupportedDTypeError(OpModelError):
    """The hardware has no throughput for the data type an op computes in."""


class UnknownNameError(OpModelError, LookupError):
    """A model, hardware config or other named item does not exist."""

    def __str__(self) -> str:  # LookupError would quote the message like a dict key
        return str(self.args[0]) if self.args else ""


def located(where: str, error: OpModelError) -> OpModelError:
    """``error`` with ``where: `` (a file, a row, a list index) before each of its lines, of
    the same class, so that an error raised inside a model names the input it came from."""
    lines = [f"{where}: {line}" for line in str(error).splitlines()]
    if isinstance(error, ConfigError):
        return ConfigError(lines)
    return type(error)("\n".join(lines))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``"; did you mean 'x'?"`` for the closest choice, or ``""`` when none is close.

    Choices that begin with ``word`` come first (``h200`` means ``h200_sxm``, not ``b200``,
    which is one letter away); among several, or when none begins with it, the closest by
    :func:`difflib.get_close_matches`."""
    import difflib  # noqa: PLC0415 - only error paths need it; keeps start-up fast

    options = list(choices)
    prefixed = [c for c in options if word and c.lower().startswith(word.lower())]
    if len(prefixed) == 1:
        return f"; did you mean '{prefixed[0]}'?"
    close = difflib.get_close_matches(
        word, prefixed or options, n=1, cutoff=0.6 if not prefixed else 0
    )
    return f"; did you mean '{close[0]}'?" if close else ""


def unknown_name_message(what: str, word: str, choices: Iterable[str]) -> str:
    """Render the standard "unknown X 'w'; did you mean ...; valid: a, b" message."""
    valid = sorted(choices)
    return f"unknown {what} '{word}'{did_you_mean(word, valid)} (valid: {', '.join(valid)})"


def shown(value: object) -> str:
    """``repr(value)`` cut to 60 characters, for the ``(got X)`` of a one-line message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
