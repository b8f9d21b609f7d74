"""What the benchmarks that start ``humeval serve`` share: a free loopback port, stopping the server, what /proc
says of its processes (CPU, resident memory) and the answer a participant gives on a task page.

Imported by the scripts of this directory (run as ``python benchmarks/<name>.py``, which puts it
on ``sys.path``).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["cpu_ticks", "enter", "free_port", "machine_ticks", "process_tree", "rss_mb", "stop", "task_form"]


def free_port() -> int:
    """A port nothing listens on, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def enter(http: Any, platform: Any, pid: str) -> tuple[dict[str, str], Any]:
    """A participant through the JSON API (an ``httpx.AsyncClient``): enter by the study's route, consent when asked,
    ``GET /api/v1/next``; their bearer header and that answer."""
    from humeval.platforms.entry import entry_body

    r = await http.post("/api/v1/enter", json=entry_body(platform, pid))
    r.raise_for_status()
    entered = r.json()
    h = {"authorization": f"Bearer {entered['token']}"}
    if entered.get("consent_required"):
        (await http.post("/api/v1/consent", json={}, headers=h)).raise_for_status()
    return h, await http.get("/api/v1/next", headers=h)


def stop(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Stop a server started with ``start_new_session=True``: SIGTERM to its process group (the supervisor and
    its workers), SIGKILL when it has not exited within ``timeout`` seconds; reaped either way."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (field 3 onwards), or None if it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_tree(root: int) -> list[int]:
    """``root`` and every process descending from it (uvicorn's supervisor and its workers)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += parents.get(pid, [])
    return tree


def cpu_ticks(pids: list[int], *, children: bool) -> dict[int, int]:
    """utime + stime (+ cutime + cstime: waited-for children) of each readable process, in clock ticks."""
    out = {}
    for pid in pids:
        fields = _stat(pid)
        if fields is not None:
            # fields[11:15]: utime, stime, cutime, cstime (stat fields 14-17)
            out[pid] = sum(int(x) for x in fields[11 : 15 if children else 13])
    return out


def machine_ticks() -> tuple[int, int]:
    """The machine's CPU time since boot, summed over its CPUs, in clock ticks: (busy, stolen). Busy is user, nice,
    system, irq and softirq time, so it includes what no process is charged for (the loopback's softirqs); stolen
    is time the hypervisor gave to other machines."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9])
    return user + nice + system + irq + softirq, steal


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


#: a choice of a task page's form (``templates/task.html``: 2AFC and Likert criteria are radio buttons)
_CHOICE = re.compile(r'<input type="radio" name="([^"]+)" value="([^"]*)"')
_HIDDEN = re.compile(r'<input type="hidden" name="(assignment_id|idempotency_key)" value="([^"]*)"')


def task_form(html: str) -> dict[str, str] | None:
    """The form a participant sends from a task page (``GET /task``): its assignment and key, and for each
    criterion the middle one of its choices; None when the page shows no task form."""
    hidden = dict(_HIDDEN.findall(html))
    if "assignment_id" not in hidden:
        return None
    choices: dict[str, list[str]] = {}
    for name, value in _CHOICE.findall(html):
        choices.setdefault(name, []).append(value)
    return hidden | {name: values[len(values) // 2] for name, values in choices.items()} | {"seconds": "4.2"}
