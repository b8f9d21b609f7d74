"""Schemathesis fuzzes the JSON API in-process from the ``openapi.json`` the server generates (bounded budget).

Every stateless check schemathesis has must pass on every generated request: no 5xx, status codes,
content types, headers and bodies as documented, schema-valid bodies accepted, schema-invalid bodies
refused, auth not ignored, 405 with ``Allow`` for undocumented methods. Admin operations get the
admin token, the others a participant's. ``EXAMPLES`` per operation and mode, derandomised.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS

from tests.integration.server.inprocess import ADMIN, InProcess
from tests.integration.server.studies import pairwise_study

pytestmark = pytest.mark.timeout(150)
EXAMPLES = 25
#: checks that need a sequence of calls (the stateful phase), not one request
STATEFUL = {"use_after_free", "ensure_resource_availability", "object_level_authorization"}


def test_schemathesis_finds_no_server_error_and_no_conformance_failure(tmp_path: Path) -> None:
    srv = InProcess(pairwise_study(tmp_path / "study", items=30))
    checks = [check for check in CHECKS.get_all() if check.__name__ not in STATEFUL]
    tally: Counter[str] = Counter()
    failures: list[str] = []
    try:
        async def token(c: httpx.AsyncClient) -> str:
            return (await c.post("/api/v1/enter", json={"participant_id": "fuzzer"})).json()["token"]

        participant = srv.run(token)

        async def from_loopback(scope: dict, receive: object, send: object) -> None:
            # schemathesis' ASGI client names its peer "testclient", which the entry guard treats as a remote
            # network: its entry budget (a deliberate 503 entry_rate) would then depend on how many new ids the
            # fuzzer happened to draw. The fuzzer stands for the server's own machine, like every in-process test.
            await srv.app({**scope, "client": ("127.0.0.1", 4321)} if "client" in scope else scope, receive, send)

        api = schemathesis.openapi.from_asgi("/api/v1/openapi.json", from_loopback)
        operations = [result.ok() for result in api.get_all_operations()]
        assert len(operations) == 9  # enter, consent, next, judgements, status, places, and the admin routes
        for operation in operations:
            headers = {"Authorization": f"Bearer {ADMIN if '/admin/' in operation.path else participant}"}
            modes = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if operation.body else [])
            strategy = st.one_of([operation.as_strategy(generation_mode=mode) for mode in modes])

            @given(case=strategy, headers=st.just(headers))
            @settings(max_examples=EXAMPLES * len(modes), deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def fuzz(case: schemathesis.Case, headers: dict[str, str]) -> None:
                response = case.call(headers=headers)
                tally[f"{response.status_code // 100}xx"] += 1
                try:
                    case.validate_response(response, checks=checks, headers=headers)
                except AssertionError as exc:  # schemathesis failures are AssertionErrors: collect them all
                    failures.append(f"{case.method} {case.path}: {str(exc)[:300]}")

            fuzz()
    finally:
        srv.close()
    print(f"\nschemathesis: {sum(tally.values())} requests, {dict(sorted(tally.items()))}, "
          f"{len(failures)} failures")
    assert tally["5xx"] == 0 and not failures, failures[:5]
    assert sum(tally.values()) >= 200  # the fuzzer really ran


def test_schemathesis_cli_coverage_phase_against_a_served_study(tmp_path: Path, db_url: str | None) -> None:
    """The CLI's coverage phase (boundaries of every bound and pattern, undocumented methods) against a real
    ``humeval serve``: the participant operations with a participant token, the admin ones with the admin token."""
    import re
    import shutil
    import subprocess
    import sys

    from tests.integration.server.server import ADMIN as SERVE_ADMIN
    from tests.integration.server.server import ServerProcess

    study = pairwise_study(tmp_path / "study", items=30)
    server = ServerProcess(study.root, db_url).start()
    exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
    totals = {"generated": 0, "passed": 0}
    try:
        token = httpx.post(server.url + "/api/v1/enter", json={"participant_id": "fuzzer"}).json()["token"]
        for regex, bearer in (("^/api/v1/(?!admin/)", token), ("^/api/v1/admin/", SERVE_ADMIN)):
            cmd = [exe, "run", f"{server.url}/api/v1/openapi.json", "--checks", "all",
                   "--exclude-checks", ",".join(sorted(STATEFUL)), "--include-path-regex", regex,
                   "--max-examples", "30", "--seed", "1", "--phases", "examples,coverage,fuzzing",
                   "-H", f"Authorization: Bearer {bearer}"]
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
            report = result.stdout[-3000:] + result.stderr[-1000:]
            assert result.returncode == 0, report
            counts = re.search(r"(\d+) generated, (\d+) passed", report)
            assert counts is not None, report
            totals["generated"] += int(counts.group(1))
            totals["passed"] += int(counts.group(2))
    finally:
        server.stop()
    print(f"\nschemathesis CLI: {totals['generated']} generated, {totals['passed']} passed")
    assert totals["passed"] == totals["generated"] >= 200  # the fuzzer really ran, and nothing failed
