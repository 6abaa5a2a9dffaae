"""Triton adapter for `tts_stream` (decoupled): text -> one response per sentence, sent as soon as it is spoken.

The text is normalized and split here (`tts_runtime.runtime.streaming`); each sentence goes through the
`frontend` and `speech` models (parameters `frontend_model`, `speech_model`) by BLS, with the request's voice
and speed, and its audio is sent at once. Each request streams on its own worker thread (at most parameter
`max_streams` at a time), so `execute` returns at once and streams overlap. A cancelled request
(`request.is_cancelled()`, e.g. the gRPC client cancelled its stream) synthesizes no further sentence.
Text longer than parameter `max_chars` (default 5000), and a speed out of range, are refused (INVALID_ARG naming
`max_chars` or `speed`) before any sentence is synthesized, not as a `speech` failure partway through the stream.
"""
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bls_runtime import Callees, CallError
from tts_runtime.runtime.serving import MAX_CHARS, check_speed, optional_input, parameters, speed_of, text_of
from tts_runtime.runtime.streaming import stream_sentences

FRONTEND_OUTPUTS = ["tokens", "segment_lengths", "unknown_symbols"]


class TritonPythonModel:
    def initialize(self, args):
        params = parameters(json.loads(args["model_config"]))
        self.frontend_model = params.get("frontend_model", "frontend")
        self.speech_model = params.get("speech_model", "speech")
        self.timeout_s = float(params.get("call_timeout_s", "60"))
        self.max_chars = int(params.get("max_chars") or MAX_CHARS)
        self.callees = Callees(args, pb_utils)
        self.pool = ThreadPoolExecutor(max_workers=int(params.get("max_streams", "4")), thread_name_prefix="tts_stream")

    def execute(self, requests):
        for request in requests:
            self.pool.submit(self._stream, request)
        return None

    def finalize(self):
        self.pool.shutdown(wait=False, cancel_futures=True)

    def _synthesize(self, sentence, options):
        front = self.callees.call(self.frontend_model, {"text": np.array([[sentence.encode("utf-8")]], dtype=object)},
                                  FRONTEND_OUTPUTS, self.timeout_s)
        inputs = {"tokens": front["tokens"], "segment_lengths": front["segment_lengths"], **options}
        speech = self.callees.call(self.speech_model, inputs, ["audio", "sample_rate"], self.timeout_s)
        unknown = front["unknown_symbols"].reshape(-1)[0]
        return speech["audio"].reshape(-1), int(speech["sample_rate"].reshape(-1)[0]), unknown.decode("utf-8")

    def _stream(self, request):
        sender = request.get_response_sender()
        try:
            text = text_of(optional_input(pb_utils, request, "text"), self.max_chars)
            given = {name: optional_input(pb_utils, request, name) for name in ("voice", "speed")}
            options = {name: value for name, value in given.items() if value is not None}
            check_speed(speed_of(options.get("speed")))
            for chunk in stream_sentences(text, lambda s: self._synthesize(s, options), request.is_cancelled):
                sender.send(pb_utils.InferenceResponse([
                    pb_utils.Tensor("audio", chunk.audio[None].astype(np.float32)),
                    pb_utils.Tensor("sample_rate", np.array([[chunk.sample_rate]], dtype=np.int32)),
                    pb_utils.Tensor("unknown_symbols", np.array([[chunk.unknown_symbols]], dtype=object)),
                    pb_utils.Tensor("sentence", np.array([[chunk.text]], dtype=object)),
                ]))
            error = None
        except ValueError as exc:  # empty or too long text, nothing to speak, bad UTF-8, speed out of range
            error = pb_utils.TritonError(str(exc), pb_utils.TritonError.INVALID_ARG)
        except CallError as exc:  # a callee refused (an unknown voice) or failed
            error = pb_utils.TritonError(str(exc))
        except Exception as exc:  # noqa: BLE001 - the stream must still end, with the reason
            error = pb_utils.TritonError(f"tts_stream failed: {type(exc).__name__}: {exc}")
        _finish(sender, error)


def _finish(sender, error):
    """The final flag, with the error if any; a cancelled stream may refuse it, which ends it just the same."""
    try:
        if error is None:
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        else:
            sender.send(pb_utils.InferenceResponse(error=error), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
    except Exception:  # noqa: BLE001, S110 - nothing to tell a client that has gone
        pass
