"""Probes of the public surface against a real ``humeval serve`` of a Prolific study (fake Prolific).

- Prolific's hook: an unsigned 600 MB chunked body is refused (401) before it is read, and one that carries
  signature headers is cut off at the hook's limit (413), the server's memory growing by less than 20 MB
  (its resident size, from /proc); a replayed signed delivery is handled once; bad headers get a JSON 4xx.
- Origins: a foreign ``Host`` with a matching ``Origin``, or an ``https`` Origin for the study served over
  plain ``http``, is refused (403); the study's own origin is not.
- Assignment ids as served are opaque (the statistics: ``tests/unit/store/test_assignment_ids.py``).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from humeval import logbook
from humeval.platforms.prolific.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from tests.fake_prolific import TOKEN, FakeProlific
from tests.integration.server.server import ServerProcess
from tests.integration.test_prolific_acceptance import cli, make_study

pytestmark = [pytest.mark.timeout(120)]
SECRET = "hook-secret-for-the-probes"
MB = 1024 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, FakeProlific, object]]:
    with FakeProlific() as fake:
        study = make_study(tmp_path_factory.mktemp("probes") / "study")
        cli(study, fake, "create")
        mp = pytest.MonkeyPatch()
        for name, value in (("PROLIFIC_HOOK_SECRET", SECRET), ("PROLIFIC_TOKEN", TOKEN), ("PROLIFIC_API_URL", fake.url),
                            ("PROLIFIC_TIMEOUT", "2")):
            mp.setenv(name, value)
        server = ServerProcess(study.root, None)
        try:
            server.start()
            yield server, fake, study
        finally:
            server.stop()
            mp.undo()


def _rss(pid: int) -> int:
    """The process's resident set size in bytes (/proc/PID/status, VmRSS)."""
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) * 1024


def _chunked_upload(port: int, headers: dict[str, str], total: int) -> tuple[bytes, int, float]:
    """POST /prolific/hook with a chunked body of up to ``total`` bytes made as it is sent (1 MB chunks, never
    held whole); stops when the server answers or closes. (The response's first bytes, bytes sent, seconds.)"""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    chunk = b"%x\r\n" % MB + b"x" * MB + b"\r\n"
    sent, start = 0, time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST /prolific/hook HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     f"Transfer-Encoding: chunked\r\n{head}\r\n".encode())
        sock.setblocking(False)
        answer = b""
        while sent < total:
            try:
                answer += sock.recv(65536)
                if answer:
                    break
            except BlockingIOError:
                pass
            except OSError:
                break
            try:
                sock.setblocking(True)
                sock.settimeout(5)
                sock.sendall(chunk)
                sock.setblocking(False)
                sent += MB
            except OSError:  # the server answered and closed the connection
                break
        sock.setblocking(True)
        sock.settimeout(5)
        try:
            while b"\r\n\r\n" not in answer:
                more = sock.recv(65536)
                if not more:
                    break
                answer += more
        except OSError:
            pass
    return answer, sent, time.monotonic() - start


def test_a_huge_hook_body_is_refused_without_growing_the_server(served) -> None:
    server, _, _ = served
    pid = server.proc.pid
    before, peak = _rss(pid), [0]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss(pid))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        answer, sent, seconds = _chunked_upload(server.port, {}, 600 * MB)  # unsigned
        print(f"unsigned: {sent / MB:.0f} MB sent in {seconds:.2f} s")
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
        assert sent < 600 * MB and seconds < 60  # refused as it starts, not after reading it
        ts = str(int(time.time()))  # headers that look signed: the body is read, up to the hook's limit
        answer, sent, _ = _chunked_upload(server.port, {TIMESTAMP_HEADER: ts, SIGNATURE_HEADER: "x" * 44}, 600 * MB)
        print(f"signed headers: {sent / MB:.0f} MB sent")
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert b"application/json" in answer
        assert sent < 600 * MB
    finally:
        stop.set()
        watcher.join()
    print(f"server RSS {before / MB:.1f} MB before, {peak[0] / MB:.1f} MB at its peak")
    assert peak[0] - before < 20 * MB, (before, peak[0])


def test_a_replayed_signed_hook_is_handled_once(served) -> None:
    server, fake, study = served
    body = json.dumps({"resource_id": "sub-1", "event_type": "submission.status.change", "participant_id": "p",
                       "status": "RETURNED"}).encode()
    ts = str(int(time.time()))
    headers = {TIMESTAMP_HEADER: ts, SIGNATURE_HEADER: sign(SECRET, ts, body), "content-type": "application/json"}
    def synced() -> int:
        return sum(1 for e in logbook.read(study) if "prolific-status" in str(e.get("stage", "")))

    before, asked = synced(), len(fake.state.log)
    with httpx.Client(base_url=server.url, timeout=10) as c:
        first = c.post("/prolific/hook", content=body, headers=headers)
        assert first.status_code == 204, first.text
        after_first = len(fake.state.log)
        assert after_first > asked and synced() == before + 1
        for _ in range(2):
            again = c.post("/prolific/hook", content=body, headers=headers)
            assert again.status_code == 200 and again.json()["handled"] is False
        assert len(fake.state.log) == after_first and synced() == before + 1  # nothing asked, nothing logged twice
        # bad input: a JSON 4xx, never 5xx
        for bad_ts in ("nan", "inf", "-inf", "1e999", "", "12:00", str(int(time.time()) - 3600)):
            r = c.post("/prolific/hook", content=body, headers={**headers, TIMESTAMP_HEADER: bad_ts})
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", (bad_ts, r.text)
        r = c.post("/prolific/hook", content=body, headers={**headers, SIGNATURE_HEADER: "forged"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:  # a body announced, not sent
            sock.sendall(f"POST /prolific/hook HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n{head}\r\n".encode())
            answer = b""
            while b'"too_large"' not in answer and (part := sock.recv(65536)):  # headers and body may come apart
                answer += part
        assert answer.startswith(b"HTTP/1.1 413") and b'"too_large"' in answer, answer[:300]
        r = c.get("/prolific/hook")
        assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_origins_are_checked_against_the_study_not_the_request(served) -> None:
    server, _, _ = served
    own = f"http://127.0.0.1:{server.port}"
    with httpx.Client(base_url=server.url, timeout=10) as c:
        body = {"PROLIFIC_PID": "5f0c" + "0" * 20, "STUDY_ID": "s", "SESSION_ID": "x"}
        for headers in ({"host": "evil.example", "origin": "http://evil.example"},
                        {"origin": f"https://127.0.0.1:{server.port}"},  # https for a study served over http
                        {"origin": "http://127.0.0.1"}):  # another port is another origin
            r = c.post("/api/v1/enter", json=body, headers=headers)
            assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden_origin", (headers, r.text)
        page = c.post("/start", data={"participant_id": "x"}, headers={"host": "evil.example",
                                                                        "origin": "http://evil.example"})
        assert page.status_code == 403
        for origin in (own, f"http://localhost:{server.port}"):
            r = c.post("/api/v1/enter", json=body, headers={"origin": origin})  # past the origin check (this made-up
            # submission is then refused by Prolific's entry check, which the origin check runs before)
            assert r.status_code < 400 or r.json()["error"]["code"] != "forbidden_origin", (origin, r.text)


def test_served_assignment_ids_are_opaque(served) -> None:
    server, fake, study = served
    [study_id] = fake.state.studies  # `prolific create`'s study: a first entry needs its active submission
    ids = []
    with httpx.Client(base_url=server.url, timeout=10) as c:
        for k in range(4):
            fake.state.add_submission(study_id, f"{k:024x}", f"s{k}")
            entered = c.post("/api/v1/enter", json={"PROLIFIC_PID": f"{k:024x}", "STUDY_ID": study_id,
                                                    "SESSION_ID": f"s{k}", "consent": True})
            if entered.status_code != 200:
                continue
            h = {"authorization": f"Bearer {entered.json()['token']}"}
            got = c.get("/api/v1/next", headers=h)
            if got.status_code == 200:
                ids.append(got.json()["assignment_id"])
            # the cookie of the pages does not open the API
            assert c.get("/api/v1/next", headers={"cookie": f"humeval_token={entered.json()['token']}"}).status_code == 401
    assert ids and all(re.fullmatch(r"[0-9a-f]{32}", a) for a in ids), ids
