"""The ASR example (examples/asr/tritonkit.yaml over tritonkit:ensembles/asr.yaml) on the real embedded Triton.

One server for the module. Utterances go through the `asr` ensemble over HTTP and gRPC; the served transcript
must equal the same pipeline run in process (fbank -> onnxruntime on the built model.onnx -> WfstDecoder over the
built TLG.fst), and, with the committed weights and held-out WAVs present, the reference words. Without the
weights the acoustic model is the same network with seeded random weights: the plumbing is checked, accuracy not.
"""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from tests.conftest import REPO_ROOT, run_cli
from tritonkit.pipelines.asr.runtime.decoder import Graph, WfstDecoder
from tritonkit.pipelines.asr.runtime.features import compute_fbank
from tritonkit.serve.server import EmbeddedServer

pytestmark = pytest.mark.server

EXAMPLE = REPO_ROOT / "examples" / "asr"
TRAINED = (EXAMPLE / "weights" / "ctc_commands.pt").is_file() and (EXAMPLE / "heldout" / "transcripts.tsv").is_file()
# The example's entry point, importable from a project outside the repository (python_path stays in the project).
ENTRY = {
    True: f"import sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\nfrom examples.asr.model import build  # noqa: E402\n",
    False: (f"import sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\nimport torch  # noqa: E402\n"
            "from examples.asr.model import MELS, CommandCTC  # noqa: E402\n\n\ndef build():\n    torch.manual_seed(0)\n"
            "    return CommandCTC().eval(), (torch.randn(2, 120, MELS) * 3 - 8,)\n"),
}


def _utterances() -> list[tuple[np.ndarray, int, list[str]]]:
    """(pcm, rate, reference words): the held-out WAVs, else espeak-ng sentences in held-out voices."""
    import sys

    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from examples.asr import corpus
    from examples.asr.heldout import read_heldout, read_wav

    if TRAINED:
        return [(*read_wav(u.path), u.words) for u in read_heldout()[:6]]
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (make setup installs it)")
    rng = random.Random(1)
    return [(corpus.synthesize(words, corpus.random_voice(rng, corpus.HELDOUT_VARIANTS)), corpus.SAMPLE_RATE, words)
            for words in (corpus.grammar_sentence(rng) for _ in range(3))]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    project = tmp_path_factory.mktemp("asr")
    shutil.copy(EXAMPLE / "tritonkit.yaml", project / "tritonkit.yaml")
    shutil.copytree(EXAMPLE / "lang", project / "lang")
    (project / "acoustic_entry.py").write_text(ENTRY[TRAINED])
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    repository = project / "model_repository"
    with EmbeddedServer(repository, work_dir=project / ".tritonkit", startup_timeout=240) as server:
        yield server, repository


def _in_process(repository: Path, pcm: np.ndarray, rate: int) -> str:
    folder = repository / "acoustic" / "1"
    session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    log_probs = session.run(None, {"FEATURES": compute_fbank(pcm, rate)[None]})[0][0]
    return WfstDecoder(Graph.load(folder)).decode(log_probs).text


def _http(server, pcm: np.ndarray, rate: int) -> tuple[str, list[dict]]:
    client = httpclient.InferenceServerClient(server.http_url)
    inputs = [httpclient.InferInput("PCM", [1, pcm.size], "FP32"), httpclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
    result = client.infer("asr", inputs)
    return result.as_numpy("TRANSCRIPT")[0, 0].decode(), json.loads(result.as_numpy("WORDS")[0, 0])


def _grpc(server, pcm: np.ndarray, rate: int) -> str:
    client = grpcclient.InferenceServerClient(server.grpc_url)
    inputs = [grpcclient.InferInput("PCM", [1, pcm.size], "FP32"), grpcclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
    return client.infer("asr", inputs).as_numpy("TRANSCRIPT")[0, 0].decode()


def test_utterances_transcribed_over_http_and_grpc_as_in_process(served) -> None:
    server, repository = served
    for pcm, rate, words in _utterances():
        expected = _in_process(repository, pcm, rate)
        text, timed = _http(server, pcm, rate)
        assert text == expected == _grpc(server, pcm, rate)
        assert [w["word"] for w in timed] == text.split()
        assert all(0 <= w["start_s"] <= w["end_s"] <= pcm.size / rate + 0.05 for w in timed)
        if TRAINED:
            assert text.split() == words


def test_other_sample_rates_are_resampled_and_bad_ones_refused(served) -> None:
    server, repository = served
    pcm, rate, _ = _utterances()[0]
    at_8k = pcm[::2].copy()   # espeak-ng / held-out audio has little energy above 4 kHz
    text, _ = _http(server, at_8k, rate // 2)
    assert text == _in_process(repository, at_8k, rate // 2)
    with pytest.raises(Exception, match="sample rate must be positive"):
        _http(server, pcm, 0)


@pytest.mark.xfail(strict=True, reason="smoke sends generated LOG_PROBS [2, 2] to `decoder` (dims [-1, -1] in the "
                   "model-independent pipeline) and the graph needs 27 columns; needs golden decoder/asr cases")
def test_smoke_is_green(served) -> None:
    server, repository = served
    result = run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url, "--json")
    assert result.returncode == 0, result.stdout + result.stderr

