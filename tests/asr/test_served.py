"""The ASR example (the asr starter: the shipped model over tritonkit:ensembles/asr.yaml) on the real embedded Triton.

One server for the module. The committed held-out WAVs (voices never used in training) go through the `asr`
ensemble over HTTP and gRPC; each served transcript must equal the same pipeline run in process (fbank ->
onnxruntime on the built model.onnx -> WfstDecoder over the built TLG.fst), and the word error rate against the
references must be at most 5%.
"""
from __future__ import annotations

import json
import sys
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

if str(REPO_ROOT) not in sys.path:  # `examples` is a package at the repository root
    sys.path.insert(0, str(REPO_ROOT))

from examples.asr.heldout import read_heldout, read_wav, word_error_rate  # noqa: E402
from examples.asr.project import write_project  # noqa: E402

pytestmark = pytest.mark.server

#: The most word errors the WFST decoder may make on held-out voices.
MAX_WER = 0.05


def _utterances() -> list[tuple[np.ndarray, int, list[str]]]:
    """(pcm, rate, reference words) of the committed held-out WAVs (voices never used in training)."""
    return [(*read_wav(u.path), u.words) for u in read_heldout()]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    project = tmp_path_factory.mktemp("asr")
    write_project(project)
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
    inputs = [httpclient.InferInput("PCM", [1, pcm.size], "FP32"),
              httpclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
    result = client.infer("asr", inputs)
    return result.as_numpy("TRANSCRIPT")[0, 0].decode(), json.loads(result.as_numpy("WORDS")[0, 0])


def _grpc(server, pcm: np.ndarray, rate: int) -> str:
    client = grpcclient.InferenceServerClient(server.grpc_url)
    inputs = [grpcclient.InferInput("PCM", [1, pcm.size], "FP32"),
              grpcclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
    return client.infer("asr", inputs).as_numpy("TRANSCRIPT")[0, 0].decode()


def test_heldout_voices_transcribed_over_http_and_grpc_as_in_process(served) -> None:
    server, repository = served
    refs, hyps = [], []
    for pcm, rate, words in _utterances():
        expected = _in_process(repository, pcm, rate)
        text, timed = _http(server, pcm, rate)
        assert text == expected == _grpc(server, pcm, rate)
        assert [w["word"] for w in timed] == text.split()
        assert all(0 <= w["start_s"] <= w["end_s"] <= pcm.size / rate + 0.05 for w in timed)
        refs.append(words)
        hyps.append(text.split())
    assert len(refs) >= 20
    assert word_error_rate(refs, hyps) <= MAX_WER, list(zip(refs, hyps))


def test_other_sample_rates_are_resampled_and_bad_ones_refused(served) -> None:
    server, repository = served
    pcm, rate, _ = _utterances()[0]
    at_8k = pcm[::2].copy()   # espeak-ng / held-out audio has little energy above 4 kHz
    text, _ = _http(server, at_8k, rate // 2)
    assert text == _in_process(repository, at_8k, rate // 2)
    with pytest.raises(Exception, match="sample rate must be positive"):
        _http(server, pcm, 0)


def test_smoke_is_green(served) -> None:
    """The spec's known answers (held-out-voice WAVs through `asr`, log-probs through `decoder`) replace the
    generated request that the model-independent decoder (LOG_PROBS dims [-1, -1]) would rightly refuse."""
    server, repository = served
    result = run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    checks = {(c["check"], c["model"], c["protocol"]) for c in json.loads(result.stdout)["results"]}
    for model in ("asr", "decoder"):
        assert {("request:case000", model, p) for p in ("http", "grpc")} <= checks
        assert not {c for c in checks if c[:2] == ("infer:generated", model)}

