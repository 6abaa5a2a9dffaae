"""examples/asr/client.py run as a user would (a subprocess) against the built ASR example on the embedded Triton.

One server for the module (the fixture of test_served.py). On a held-out WAV the client's offline transcript
(HTTP, `asr`) must be the clip's reference, its streamed final (gRPC, `asr_stream`, 160 ms chunks) must equal
it, and it prints one partial per chunk but the last.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from examples.asr.heldout import HELDOUT_DIR, read_wav
from tests.asr.test_served import served  # noqa: F401  (the module-scoped server fixture)
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.server

CLIP = "heldout_10.wav"   # "call six four", as in the README


def _client(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "examples.asr.client", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)


def _lines(stdout: str, prefix: str) -> list[str]:
    return [line.removeprefix(prefix).strip() for line in stdout.splitlines() if line.startswith(prefix)]


def test_client_transcribes_over_http_and_streams_over_grpc(served) -> None:  # noqa: F811
    server, _ = served
    reference = next(line.split("\t")[2] for line in (HELDOUT_DIR / "transcripts.tsv").read_text().splitlines()
                     if line.startswith(CLIP))
    result = _client(str(HELDOUT_DIR / CLIP), "--url", server.http_url, "--grpc-url", server.grpc_url)
    assert result.returncode == 0, result.stdout + result.stderr
    offline, final = _lines(result.stdout, "offline:"), _lines(result.stdout, "final:")
    assert offline == final == [reference], result.stdout
    timed = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("  ")]
    assert timed == reference.split()
    partials = _lines(result.stdout, "partial")
    pcm, rate = read_wav(HELDOUT_DIR / CLIP)
    assert len(partials) == -(-pcm.size // (rate * 160 // 1000)) - 1


def test_client_refuses_a_bad_sequence_id_in_one_line() -> None:
    result = _client(str(HELDOUT_DIR / CLIP), "--sequence-id", "0")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith("--sequence-id: 0 is out of range; use 1 .. 2^63-1")
