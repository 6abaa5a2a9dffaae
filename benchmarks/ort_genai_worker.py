"""onnxruntime-genai, in process: greedy generations of token ids sent on stdin (run by the peers' python).

`python ort_genai_worker.py MODEL_DIR`: prints {"ready": true} once loaded, then for each line
{"ids": [...], "max_tokens": N} one line {"tokens": [seconds from the request's start to each token]}.
EOS is ignored (min_length = max_length), like the served peers' ignore_eos / min_tokens.
"""
from __future__ import annotations

import json
import sys
import time

import onnxruntime_genai as og


def generate(model: og.Model, ids: list[int], max_tokens: int) -> list[float]:
    params = og.GeneratorParams(model)
    length = len(ids) + max_tokens
    params.set_search_options(do_sample=False, max_length=length, min_length=length)
    started = time.perf_counter()
    generator = og.Generator(model, params)
    generator.append_tokens(ids)
    times = []
    while not generator.is_done():
        generator.generate_next_token()
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    model = og.Model(sys.argv[1])
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"tokens": generate(model, request["ids"], request["max_tokens"])}), flush=True)


if __name__ == "__main__":
    main()
