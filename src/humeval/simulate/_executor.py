"""Run independent tasks in parallel: local processes by default, a Dask cluster by address.

Results never depend on the number of processes: each task carries its own seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from humeval.errors import HumevalError

__all__ = ["map_tasks"]


def _call(args: tuple[Callable[..., Any], tuple[Any, ...]]) -> Any:
    fn, a = args
    return fn(*a)


def map_tasks(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], processes: int = 1,
              address: str | None = None) -> list[Any]:
    """``[fn(*t) for t in tasks]``, in order, on ``processes`` local processes or a Dask scheduler."""
    if address:
        try:
            from distributed import Client  # type: ignore[import-not-found]
        except ImportError:
            raise HumevalError(
                f"a cluster address was given ({address}) but Dask is not installed: pip install 'dask[distributed]'"
            ) from None
        with Client(address) as client:
            futures = [client.submit(fn, *t, pure=False) for t in tasks]
            return client.gather(futures)
    if isinstance(processes, bool) or int(processes) != processes or processes < 1:
        raise HumevalError(f"processes must be a positive integer, got {processes!r}")
    if processes == 1 or len(tasks) <= 1:
        return [fn(*t) for t in tasks]
    with ProcessPoolExecutor(max_workers=int(processes)) as ex:
        return list(ex.map(_call, [(fn, tuple(t)) for t in tasks]))
