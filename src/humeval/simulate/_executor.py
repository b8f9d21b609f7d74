"""Run independent tasks in parallel: local processes by default, a Dask cluster by address.

Results never depend on the number of processes: each task carries its own seed. With a
cluster address the cluster's workers do the work: ``processes`` must then stay 1 (a
larger value would be ignored, so it is refused). An address that does not answer within
:data:`CONNECT_TIMEOUT` seconds is an error naming it, not a long wait.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from humeval.errors import HumevalError

__all__ = ["CONNECT_TIMEOUT", "map_tasks"]

#: seconds to wait for a Dask scheduler to answer before giving up
CONNECT_TIMEOUT = 5.0


def _call(args: tuple[Callable[..., Any], tuple[Any, ...]]) -> Any:
    fn, a = args
    return fn(*a)


def map_tasks(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], processes: int = 1,
              address: str | None = None, *, timeout: float = CONNECT_TIMEOUT) -> list[Any]:
    """``[fn(*t) for t in tasks]``, in order, on ``processes`` local processes or a Dask scheduler.

    ``address``: a Dask scheduler (``tcp://host:port``); ``timeout``: seconds to wait for it to answer.
    """
    if isinstance(processes, bool) or not isinstance(processes, numbers.Real) or int(processes) != processes or processes < 1:
        raise HumevalError(f"processes must be a positive integer, got {processes!r}")
    processes = int(processes)
    if address:
        if processes != 1:
            raise HumevalError(
                f"processes={processes} and a cluster address ({address}) were both given: the cluster's workers "
                "run the tasks; give one or the other"
            )
        return _on_cluster(fn, tasks, address, timeout)
    if processes == 1 or len(tasks) <= 1:
        return [fn(*t) for t in tasks]
    with ProcessPoolExecutor(max_workers=int(processes)) as ex:
        return list(ex.map(_call, [(fn, tuple(t)) for t in tasks]))


def _on_cluster(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], address: str, timeout: float) -> list[Any]:
    try:
        from distributed import Client  # type: ignore[import-not-found]
    except ImportError:
        raise HumevalError(
            f"a cluster address was given ({address}) but Dask is not installed: pip install 'humeval[dask]'"
        ) from None
    try:
        client = Client(address, timeout=timeout)
    except ValueError as exc:  # not an address
        raise HumevalError(
            f"{address!r} is not a Dask scheduler address ({exc}); expected tcp://HOST:PORT, as `dask scheduler` prints"
        ) from None
    except (OSError, TimeoutError) as exc:  # refused or unreachable
        raise HumevalError(
            f"cannot reach the Dask scheduler at {address!r} within {timeout:g} s ({type(exc).__name__}: {exc}); "
            "start one (`dask scheduler`, then `dask worker ADDRESS`) and pass its address as tcp://HOST:PORT, "
            "or leave the address out to run locally"
        ) from None
    with client:
        futures = [client.submit(fn, *t, pure=False) for t in tasks]
        return client.gather(futures)
