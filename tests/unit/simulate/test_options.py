"""``humeval simulate``: every option works or is refused; the Dask path on a local cluster.

The Dask tests need the ``dask`` extra (``pip install 'humeval[dask]'``) and are skipped without it.
"""

from __future__ import annotations

import gc
import json
import socket
import subprocess
import time
import warnings

import pytest
from tests.cli import humeval

from humeval.errors import HumevalError
from humeval.simulate import SimulationConfig, simulate
from humeval.simulate._executor import map_tasks


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return humeval("simulate", *args)


def _refused(p: subprocess.CompletedProcess[str], *texts: str) -> None:
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stdout == ""
    for text in texts:
        assert text in p.stderr, p.stderr


def test_two_system_options_are_refused_by_the_goal_simulation() -> None:
    # before: exit 0, --address and --processes silently ignored for more than two systems
    _refused(_run("--systems", "3", "--address", "tcp://127.0.0.1:1", "--processes", "2", "--iterations", "2"),
             "--processes, --address apply to the two-system simulation", "over 3 systems")
    _refused(_run("--goal", "pair", "--mu", "0.5", "--iterations", "2"), "--mu applies to the two-system")
    _refused(_run("--systems", "4", "--goal", "best", "--top", "2", "--iterations", "2"),
             "--top applies to --goal top-k only")


def test_goal_options_are_refused_by_the_two_system_simulation() -> None:
    _refused(_run("--profile", "equal", "--explore", "0.2", "--iterations", "2"),
             "--profile, --explore apply to the goal simulation")
    _refused(_run("--systems", "1", "--iterations", "2"), "--systems must be at least 2, got 1")  # before: ignored


def test_processes_with_an_address_is_refused() -> None:
    with pytest.raises(HumevalError, match=r"processes=2 and a cluster address \(tcp://127.0.0.1:1\)"):
        map_tasks(divmod, [(7, 2)], processes=2, address="tcp://127.0.0.1:1")
    with pytest.raises(HumevalError, match="positive integer"):
        map_tasks(divmod, [(7, 2)], processes=0)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_fails_fast_naming_the_address() -> None:
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.perf_counter()
    with pytest.raises(HumevalError, match=f"cannot reach the Dask scheduler at '{address}' within 1 s"):
        map_tasks(divmod, [(7, 2)], address=address, timeout=1)
    assert time.perf_counter() - t0 < 10  # before: distributed's 30 s connect timeout, then a raw OSError
    with pytest.raises(HumevalError, match="'nonsense' is not a Dask scheduler address"):
        map_tasks(divmod, [(7, 2)], address="nonsense", timeout=1)


# a LocalCluster that failed to start on a loaded machine may be collected during a later setup, where its __del__
# complains that it was not closed: that is the retried failure below, not a fault of the test it lands in
_FAILED_CLUSTER = "ignore:Exception ignored in.*Cluster.__del__:pytest.PytestUnraisableExceptionWarning"


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    # distributed waits 10 s for its IO loop thread to start; on a loaded machine (load 30 on 2 cores seen) it may
    # not, and the test errored at setup: a second and third try, then the failure reported as it is
    for attempt in range(3):
        try:
            c = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                             protocol="tcp://", host="127.0.0.1")
            break
        except AssertionError:
            if attempt == 2:
                raise
        # the cluster that failed to start is collected here, where its "unclosed cluster" warning is expected
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
        time.sleep(2)
    with c:
        yield c


@pytest.mark.filterwarnings(_FAILED_CLUSTER)
def test_simulation_on_a_local_cluster_gives_the_local_numbers(cluster) -> None:
    cfg = SimulationConfig(mu=0.3, n_requests=600, iterations=40)
    local = simulate(cfg, ["one", "max3"], ["anytime", "hoeffding"], seed=4)
    remote = simulate(cfg, ["one", "max3"], ["anytime", "hoeffding"], seed=4, address=cluster.scheduler_address)
    assert remote.results == local.results
    assert map_tasks(divmod, [(7, 2), (9, 4)], address=cluster.scheduler_address) == [(3, 1), (2, 1)]


@pytest.mark.filterwarnings(_FAILED_CLUSTER)
def test_cli_address_runs_on_the_cluster(cluster) -> None:
    on_cluster = _run("--mu", "0.3", "--n-requests", "600", "--iterations", "30", "--strategy", "one,max3",
                      "--rule", "anytime", "--seed", "5", "--format", "json", "--address", cluster.scheduler_address)
    assert on_cluster.returncode == 0, on_cluster.stderr
    # the CLI's defaults are SimulationConfig's: the same numbers as a local run through the API
    local = simulate(SimulationConfig(mu=0.3, n_requests=600, iterations=30), ["one", "max3"], ["anytime"], seed=5)
    assert json.loads(on_cluster.stdout)["results"] == local.to_json()["results"]
