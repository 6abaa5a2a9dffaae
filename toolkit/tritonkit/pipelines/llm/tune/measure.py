"""Measures one candidate of an LLM pipeline (`tune llm --joint`): served on the embedded Triton, `concurrency`
streams of the fixed prompts sent at once, `max_tokens` greedy tokens each (ignore_eos), `repeats` times.

Judged as benchmarks/llm.py judges the served LLM, with its clients (`stream.py`): output tokens per second
over the run; the bounds are p99 over the requests' time to first token and p99 over every gap between two tokens
of a stream. Each metric is the median over the repeats.
"""
import statistics
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.pipelines.llm.names import IDS_OUTPUT
from tritonkit.pipelines.llm.tune.stream import PROMPTS, text_run
from tritonkit.serve.server import EmbeddedServer
from tritonkit.tune.targets.engine import StreamBench, StreamSample


def prompts(concurrency: int) -> list[str]:
    """The fixed prompt set, cycled to one prompt per concurrent stream."""
    return [PROMPTS[i % len(PROMPTS)] for i in range(concurrency)]


def measure_llm(repository: Path, bench: StreamBench, work_dir: Path, log: Path) -> StreamSample:
    """Serves `repository` and runs the streams `bench.repeats` times after a short warm-up; one-line error when a
    stream fails or returns fewer tokens than asked."""
    with EmbeddedServer(repository, work_dir=work_dir, log_path=log, startup_timeout=300.0) as server:
        try:
            text_run(server.grpc_url, bench.model, prompts(2), 4, IDS_OUTPUT)  # warm-up
            runs = [text_run(server.grpc_url, bench.model, prompts(bench.concurrency), bench.max_tokens,
                             IDS_OUTPUT) for _ in range(bench.repeats)]
        except RuntimeError as exc:
            raise TritonkitError(str(log), f"model '{bench.model}'", f"a stream failed ({exc})",
                                 "read the server log") from None
    short = [len(t) for run in runs for t in run.tokens if len(t) < bench.max_tokens]
    if short:
        raise TritonkitError(str(log), f"model '{bench.model}'", f"a stream returned {min(short)} of "
                             f"{bench.max_tokens} tokens", "read the server log")
    summaries = tuple(run.summary() for run in runs)
    tok_s, ttft, itl = (statistics.median(s[key] for s in summaries) for key in ("tok_s", "ttft_p99_ms", "itl_p99_ms"))
    return StreamSample(tok_s, ttft, itl, summaries)
