"""A server-only install collects: ``humeval serve`` runs with SciPy, scikit-learn, matplotlib and pyarrow absent.

The server process blocks those modules (an import hook raising ModuleNotFoundError, as a
``pip install "humeval[server]"`` without the ``analysis`` and ``parquet`` extras would),
then seeds a locked study, admits a participant, takes judgements through the live stopping
rule (with the exclude stage's rules applied live) and shows the admin page with its agreement. The CLI turns a missing extra into a user
error that names the extra.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.integration.server.server import ADMIN, ServerProcess
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(120)

#: the modules of the ``analysis`` and ``parquet`` extras
BLOCKED = ("pandas", "scipy", "sklearn", "matplotlib", "pyarrow", "trueskill", "threadpoolctl")

BLOCKER = f"""
import sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Absent())
"""


def test_serve_without_the_analysis_and_parquet_extras(tmp_path: Path) -> None:
    study = pairwise_study(tmp_path / "study", items=12, per_participant=4)
    server = ServerProcess(study.root, None, prelude=BLOCKER).start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as c:
            r = c.post("/api/v1/enter", json={"participant_id": "light-1"})
            assert r.status_code == 200, r.text
            h = {"authorization": f"Bearer {r.json()['token']}"}
            submitted = 0
            while (a := c.get("/api/v1/next", headers=h)).status_code == 200:  # until the list ends or the rule decides
                body = {"assignment_id": a.json()["assignment_id"], "idempotency_key": f"light-{submitted:04d}",
                        "values": {"quality": "A"}}
                assert c.post("/api/v1/judgements", json=body, headers=h).status_code == 201
                submitted += 1
            assert a.status_code == 204 and submitted >= 1, (a.status_code, submitted)
            admin = c.get("/admin", params={"token": ADMIN}, follow_redirects=True)
            assert admin.status_code == 200 and "quality" in admin.text and "needs the" in admin.text  # alpha: analysis extra
            dump = c.get("/api/v1/admin/judgements", headers={"authorization": f"Bearer {ADMIN}"})
            assert dump.status_code == 200 and len(dump.json()) == submitted
            for fmt in ("csv", "jsonl"):  # streamed without pandas; Parquet says it needs the parquet extra
                exported = c.get(f"/admin/export.{fmt}")
                assert exported.status_code == 200 and len(exported.text.strip().splitlines()) == submitted + (fmt == "csv")
            assert "humeval[parquet]" in c.get("/admin/export.parquet").text
    finally:
        server.stop()
    log = server.log.read_text()
    assert "No module named" not in log and "Traceback" not in log, log


@pytest.mark.parametrize(("exclusion", "dropped"), [
    ("[{rule: straight-lining, min_tasks: 2}]", "AAAA"),
    # same-side with a tolerance: three of four on the first side (whichever system it showed) is excluded
    ("[{rule: same-side, min_tasks: 4, max_share: 0.75}]", "AAAB"),
])
def test_live_exclusion_runs_without_pandas(tmp_path: Path, exclusion: str, dropped: str) -> None:
    """The exclude stage's rules need no pandas: the live stopping rule drops a straight-lining or a same-side
    participant."""
    study = pairwise_study(tmp_path / "study", items=12, per_participant=4, exclusion=exclusion, min_in_flight=8)
    server = ServerProcess(study.root, None, prelude=BLOCKER).start()
    try:
        with httpx.Client(base_url=server.url, timeout=10) as c:
            for pid, answers in (("same", dropped), ("varied", "ABAB")):
                h = {"authorization": f"Bearer {c.post('/api/v1/enter', json={'participant_id': pid}).json()['token']}"}
                for k, choice in enumerate(answers):
                    a = c.get("/api/v1/next", headers=h)
                    assert a.status_code == 200, (pid, k, a.status_code, a.text)
                    body = {"assignment_id": a.json()["assignment_id"], "idempotency_key": f"{pid}-key-{k:04d}",
                            "values": {"quality": choice}}
                    assert c.post("/api/v1/judgements", json=body, headers=h).status_code == 201
                assert c.get("/api/v1/next", headers=h).status_code == 204  # the list is done: settled
            status = c.get("/api/v1/admin/status", headers={"authorization": f"Bearer {ADMIN}"}).json()
    finally:
        server.stop()
    log = server.log.read_text()
    assert "No module named" not in log and "Traceback" not in log, log
    stopping = status["stopping"][0]
    assert stopping["n"] == 4, stopping  # only the varied participant's four judgements reached the rule


def test_a_missing_extra_is_a_user_error_naming_it(tmp_path: Path) -> None:
    study = pairwise_study(tmp_path / "study", items=12, per_participant=4)
    code = f"{BLOCKER}\nfrom humeval.cli import main\nsys.argv = ['humeval', 'dry-run', {str(study.root)!r}]\nmain()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pip install 'humeval[analysis]'" in done.stderr and "Traceback" not in done.stderr, done.stderr
