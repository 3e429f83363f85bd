"""Where a sweep's chunks run: this process, local worker processes, or a Ray / Dask cluster.

Each engine maps one picklable function over a list of chunks and returns the results in
chunk order, calling ``progress(done_items, total_items)`` as chunks finish. The local engine is
the standard library's ``ProcessPoolExecutor``; Ray and Dask are their own schedulers, reached
through their public APIs (extras ``ray`` and ``dask``). Nothing here schedules work itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, TypeVar

from opmodel.core.errors import ConfigError

__all__ = ["ENGINES", "EngineChoice", "Progress", "run_chunks"]

ENGINES = ("local", "ray", "dask")

Progress = Callable[[int, int], None]
_T = TypeVar("_T")

_IN_PROCESS_BELOW = 512  # items: fewer than this run in this process (no worker start-up)


def _apply(func: Callable[[Any], _T], chunk: Any) -> _T:
    """Run ``func`` on one chunk (module level so that every engine can pickle it)."""
    return func(chunk)


def _local(
    func: Callable[[Any], _T], chunks: Sequence[Sequence[Any]], workers: int, progress: Progress
) -> list[_T]:
    total = sum(len(chunk) for chunk in chunks)
    results: list[_T | None] = [None] * len(chunks)
    done = 0
    if workers <= 1 or total < _IN_PROCESS_BELOW:
        for index, chunk in enumerate(chunks):
            results[index] = func(chunk)
            done += len(chunk)
            progress(done, total)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(_apply, func, chunk): i for i, chunk in enumerate(chunks)}
            for future in as_completed(futures):
                index = futures[future]
                results[index] = future.result()
                done += len(chunks[index])
                progress(done, total)
    return results  # type: ignore[return-value]


def _ray(
    func: Callable[[Any], _T],
    chunks: Sequence[Sequence[Any]],
    address: str | None,
    progress: Progress,
) -> list[_T]:
    try:
        import ray  # noqa: PLC0415 - optional dependency
    except ImportError:
        raise ConfigError(["engine ray needs ray: pip install 'opmodel[ray]'"]) from None
    if not ray.is_initialized():
        ray.init(address=address or "auto", log_to_driver=False)
    task = ray.remote(_apply)
    func_ref = ray.put(func)
    pending = {task.remote(func_ref, chunk): i for i, chunk in enumerate(chunks)}
    total = sum(len(chunk) for chunk in chunks)
    results: list[_T | None] = [None] * len(chunks)
    done = 0
    waiting = list(pending)
    while waiting:
        ready, waiting = ray.wait(waiting, num_returns=1)
        index = pending[ready[0]]
        results[index] = ray.get(ready[0])
        done += len(chunks[index])
        progress(done, total)
    return results  # type: ignore[return-value]


def _dask(
    func: Callable[[Any], _T],
    chunks: Sequence[Sequence[Any]],
    address: str | None,
    progress: Progress,
) -> list[_T]:
    try:
        from dask.distributed import Client, as_completed  # noqa: PLC0415 - optional dependency
    except ImportError:
        raise ConfigError(
            ["engine dask needs dask.distributed: pip install 'opmodel[dask]'"]
        ) from None
    if not address:
        raise ConfigError(["engine dask needs --address (the scheduler, e.g. tcp://host:8786)"])
    total = sum(len(chunk) for chunk in chunks)
    results: list[_T | None] = [None] * len(chunks)
    done = 0
    with Client(address) as client:
        futures = client.map(_apply, [func] * len(chunks), chunks, pure=False)
        index_of = {future.key: i for i, future in enumerate(futures)}
        for future in as_completed(futures):
            index = index_of[future.key]
            results[index] = future.result()
            done += len(chunks[index])
            progress(done, total)
    return results  # type: ignore[return-value]


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineChoice:
    """Where chunks run: ``kind`` (``local``, ``ray`` or ``dask``), ``workers`` local processes
    (default every core) and the cluster ``address`` (Ray: ``auto`` when omitted, or the cluster
    this process already joined; Dask: the scheduler address, required)."""

    kind: str = "local"
    workers: int | None = None
    address: str | None = None


def run_chunks(
    func: Callable[[Any], _T],
    chunks: Sequence[Sequence[Any]],
    engine: EngineChoice,
    progress: Progress | None = None,
) -> list[_T]:
    """``[func(chunk) for chunk in chunks]`` on ``engine``, calling ``progress`` as they end."""
    report = progress or (lambda _done, _total: None)
    if engine.kind == "local":
        count = (os.cpu_count() or 1) if engine.workers is None else engine.workers
        if count < 1:
            raise ConfigError([f"workers: must be >= 1 (got {count})"])
        return _local(func, chunks, count, report)
    if engine.kind == "ray":
        return _ray(func, chunks, engine.address, report)
    if engine.kind == "dask":
        return _dask(func, chunks, engine.address, report)
    accepted = ", ".join(ENGINES)
    raise ConfigError([f"engine: unknown engine '{engine.kind}' (accepted: {accepted})"])
