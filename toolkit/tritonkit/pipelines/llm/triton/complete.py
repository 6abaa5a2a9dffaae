"""Triton adapter for `complete`: one response per request, for clients that do not stream.

A non-decoupled model with its own engine over the same decoder folder: the requests Triton's dynamic
batcher hands to one `execute` are generated together, one batched step at a time, until each finishes.
(Forwarding to the decoupled `generate` with BLS would share its in-flight batches, but in Triton 2.51 a BLS
stream from a rescheduling decoupled model hangs after a few thousand responses: measured, see the README.)
"""
import itertools
import os
import sys

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm_runtime import assets
from llm_runtime.kv_cache import CacheBudgetError
from llm_runtime.loading import load_engine
from llm_runtime.triton_io import generation_outputs, generation_request, refusal


class TritonPythonModel:
    def initialize(self, args):
        config, params, folder = assets.decoder_context(args)
        loaded = load_engine(folder, params)
        self.engine, self.default_max_tokens = loaded.engine, loaded.default_max_tokens
        self.batched = config.get("max_batch_size", 0) > 0
        self.keys = itertools.count()

    def execute(self, requests):
        responses = [None] * len(requests)
        keys = {}
        for index, request in enumerate(requests):
            try:
                prompt, params = generation_request(request, self.batched, self.default_max_tokens)
                key = next(self.keys)
                self.engine.admit(key, prompt, params)
                keys[key] = index
            except (ValueError, CacheBudgetError) as exc:
                responses[index] = pb_utils.InferenceResponse(error=refusal(pb_utils, exc))
        try:
            while any(k in self.engine for k in keys):
                for out in self.engine.step([k for k in keys if k in self.engine]):
                    if out.finish_reason is not None:
                        responses[keys[out.key]] = self._response(out)
        except Exception as exc:  # noqa: BLE001 - a failed decoder call ends these requests, not the model
            for key, index in keys.items():
                self.engine.cancel(key)
                if responses[index] is None:
                    responses[index] = pb_utils.InferenceResponse(error=pb_utils.TritonError(f"decoder step failed: {exc}"))
        return responses

    def _response(self, out):
        outputs = generation_outputs(out.generated, out.generated, out.finish_reason, out.stop, self.batched)
        return pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(k, v) for k, v in outputs.items()])
