"""The streaming model `asr_stream` of the ASR example on the real embedded Triton, over gRPC.

One server for the module. Held-out WAVs (voices never used in training) are sent in 160 ms chunks as sequences
(uint64 ids above 2^32, START/END flags); the final transcript must equal the offline `asr` ensemble's for the
same audio. Eight streams at once, chunks interleaved from threads, must all be right and must have reached the
acoustic model in batches of more than one (its batch statistics). A stream at 22.05 or 44.1 kHz (SAMPLE_RATE on
START) must equal the offline transcript of the same audio at that rate.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from examples.asr.client import stream
from examples.asr.project import write_project
from tests.asr.test_served import _utterances
from tests.conftest import run_cli
from tritonkit.pipelines.asr.runtime.features import resample
from tritonkit.serve.server import EmbeddedServer

pytestmark = pytest.mark.server

CHUNK = 2560          # 160 ms at 16 kHz
FIRST_ID = 2**40      # sequence ids above 2^32 (uint64 CORRID)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    project = tmp_path_factory.mktemp("asr_stream")
    write_project(project)
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    with EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit", startup_timeout=240) as server:
        yield server


def _offline(client: grpcclient.InferenceServerClient, pcm: np.ndarray, rate: int) -> str:
    inputs = [grpcclient.InferInput("PCM", [1, pcm.size], "FP32"),
              grpcclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
    return client.infer("asr", inputs).as_numpy("TRANSCRIPT")[0, 0].decode()


def _chunk(client: grpcclient.InferenceServerClient, sequence_id: int, pcm: np.ndarray, start: bool, end: bool) -> str:
    inputs = [grpcclient.InferInput("PCM", [1, pcm.size], "FP32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    result = client.infer("asr_stream", inputs, sequence_id=sequence_id, sequence_start=start, sequence_end=end)
    return result.as_numpy("TRANSCRIPT")[0, 0].decode()


def _stream(url: str, sequence_id: int, pcm: np.ndarray) -> list[str]:
    """Every answer of one stream sent in 160 ms chunks: partials, then the final transcript last."""
    client = grpcclient.InferenceServerClient(url)
    pieces = [pcm[i:i + CHUNK] for i in range(0, pcm.size, CHUNK)]
    return [_chunk(client, sequence_id, piece, i == 0, i == len(pieces) - 1) for i, piece in enumerate(pieces)]


def _batch_counts(client: grpcclient.InferenceServerClient, model: str) -> dict[int, int]:
    stats = client.get_inference_statistics(model, as_json=True)["model_stats"][0]
    return {int(b["batch_size"]): int(b["compute_infer"].get("count", 0)) for b in stats.get("batch_stats", [])}


def test_streamed_final_transcript_equals_offline(served) -> None:
    client = grpcclient.InferenceServerClient(served.grpc_url)
    for k, (pcm, rate, words) in enumerate(_utterances()[:6]):
        assert rate == 16000
        answers = _stream(served.grpc_url, FIRST_ID + k, pcm)
        assert len(answers) == -(-pcm.size // CHUNK)
        assert answers[-1] == _offline(client, pcm, rate), (words, answers)


@pytest.mark.parametrize("rate", [22050, 44100])
def test_a_stream_at_another_rate_equals_offline_at_that_rate(served, rate: int) -> None:
    client = grpcclient.InferenceServerClient(served.grpc_url)
    for k, (at_16k, _, words) in enumerate(_utterances()[:3]):
        pcm = resample(at_16k, 16000, rate)
        answers = stream(served.grpc_url, pcm, FIRST_ID + rate + k, rate)   # SAMPLE_RATE with the first chunk
        assert len(answers) == -(-pcm.size // (rate * 160 // 1000))
        assert answers[-1] == _offline(client, pcm, rate), (words, answers)


def test_eight_concurrent_streams_are_right_and_batched(served) -> None:
    client = grpcclient.InferenceServerClient(served.grpc_url)
    utterances = sorted(_utterances(), key=lambda u: -u[0].size)[:8]   # the longest: outputs before their ends
    before = _batch_counts(client, "acoustic")
    finals: dict[int, str] = {}
    barrier = threading.Barrier(len(utterances))

    def run(k: int) -> None:
        barrier.wait()
        finals[k] = _stream(served.grpc_url, FIRST_ID + 100 + k, utterances[k][0])[-1]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(utterances))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for k, (pcm, rate, words) in enumerate(utterances):
        assert finals[k] == _offline(client, pcm, rate), (k, words)
    after = _batch_counts(client, "acoustic")
    batched = {
        size: after[size] - before.get(size, 0) for size in after if size > 1 and after[size] > before.get(size, 0)
    }
    assert batched, f"acoustic saw no batch > 1: {after}"


def test_a_chunk_for_an_unknown_stream_is_refused(served) -> None:
    client = grpcclient.InferenceServerClient(served.grpc_url)
    pcm = np.zeros(CHUNK, np.float32)
    with pytest.raises(InferenceServerException, match="START"):
        _chunk(client, FIRST_ID + 999, pcm, start=False, end=False)


def test_audio_beyond_the_shipped_size_limits_is_refused_naming_the_parameter(served) -> None:
    """ensembles/asr.yaml's bounds as shipped: max_audio_seconds 60 (offline `asr`; duration at the request's
    rate, here 8 kHz), max_chunk_seconds 5 (`asr_stream`, 16 kHz); each refusal is INVALID_ARGUMENT."""
    client = grpcclient.InferenceServerClient(served.grpc_url)
    try:
        with pytest.raises(InferenceServerException) as offline:
            _offline(client, np.zeros(8000 * 61, np.float32), 8000)
        assert offline.value.status() == "StatusCode.INVALID_ARGUMENT"
        assert "audio of 61.00 s is longer than the limit (max_audio_seconds) of 60 s" in offline.value.message()
        with pytest.raises(InferenceServerException) as chunk:
            _chunk(client, FIRST_ID + 500, np.zeros(16000 * 5 + 160, np.float32), start=True, end=True)
        assert chunk.value.status() == "StatusCode.INVALID_ARGUMENT"
        assert "a chunk of 5.01 s is longer than the limit (max_chunk_seconds) of 5 s" in chunk.value.message()
        assert isinstance(_chunk(client, FIRST_ID + 501, np.zeros(16000 * 5, np.float32), start=True, end=True), str)
    finally:
        client.close()
