"""Triton adapter for `generate`: in-flight batched generation (decoupled), the one model holding the weights
(model.onnx in its own folder), for streaming and one-shot requests alike.

The prompt is `text_input` (with `chat` true, the user's message in the model's chat format, after an optional
`system_prompt`), encoded here, or a client's own `input_ids`; the sampling settings are inputs or request
parameters, and so is a grammar the output must match (`json_schema`, `regex`, `choice` or `grammar`: compiled when
the request arrives, a bad one refused as INVALID_ARG). A request that asks for `token_ids` gets one response per
new token (the `llm` ensemble, streaming clients); one that does not (the `llm_complete` ensemble) gets a single
response, the final one, carrying every generated token: HTTP `/generate` and one-response gRPC streams work on it,
through the same in-flight batches.
Clients may stream from `generate` directly, asking for `text_output` too: that is the way to cancel in Triton 2.51,
which does not forward an ensemble request's cancellation to its steps.

`execute` only reads each request and queues it; one thread of this model runs the loop: it admits what is queued
(the KV cache reserved; or the request refused with the reason, or, when it named no max_tokens and the budget is
busy, kept waiting until running generations free it), advances up to `max_batch_size` generations a step
(those waiting longest first), and sends each its response from there. So a token costs one step and one response,
not an `execute` and a reschedule through Triton's scheduler (1.3-2 ms a token on 2 cores: benchmarks/llm_floor.py).
The loop itself is `llm_runtime.engine.Engine` (ordinary, tested Python); this file only moves data.
"""
import collections
import itertools
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm_runtime import assets
from llm_runtime.kv_cache import CacheBudgetError
from llm_runtime.loading import load_engine
from llm_runtime.text import text_delta
from llm_runtime.triton_io import (
    PROMPT_LOGPROBS,
    batched_output,
    generation_outputs,
    generation_request,
    logprob_outputs,
    refusal,
    text_array,
)

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL


@dataclass
class Client:
    """Where a generation's responses go, and what its request asked for."""

    sender: Any
    wanted: frozenset  # the outputs its request asked for (Triton drops the others after the stub sent them)

    @property
    def streaming(self):
        """token_ids requested: one response a token; else one final response with every token."""
        return "token_ids" in self.wanted


class TritonPythonModel:
    def initialize(self, args):
        needs = (assets.MODEL_FILE, assets.TOKENIZER_FILE, assets.GENERATION_FILE)
        config, params, folder = assets.model_context(args, needs)
        loaded = load_engine(folder, params)
        moved = loaded.engine.decoder.huge_page_bytes >> 20
        pb_utils.Logger.log_info(f"generate: {moved} MiB of the loaded weights on 2 MiB pages (parameter huge_pages; "
                                 "0: off, weights under 2 MiB, or the kernel refused: Linux < 6.1, or transparent "
                                 "huge pages never)")
        self.engine, self.codec, self.default_max_tokens = loaded.engine, loaded.codec, loaded.default_max_tokens
        self.generation = loaded.generation
        self.batched = config.get("max_batch_size", 0) > 0
        self.step_limit = config.get("max_batch_size", 0) or None  # generations advanced per step
        self.poll_s = assets.float_parameter(params, "cancel_poll_s", 0.1)
        self.min_step_s = assets.float_parameter(params, "min_step_s", 0.0)  # tests: streams that outlast a poll
        self.queued: queue.SimpleQueue[tuple[Client, Any, Any]] = queue.SimpleQueue()  # prompt ids, sampling
        self.waiting: collections.deque[tuple[Client, Any, Any]] = collections.deque()  # for the budget (_admit)
        self.ids = itertools.count()
        self.clients = {}  # generation key -> Client (the loop thread's only)
        self.metrics = Metrics(args["model_name"])
        self.metrics.update(self.engine)
        self.changed = False  # the engine changed since the metrics were published (idle, nothing is sent)
        self.stopping = threading.Event()
        self.loop = threading.Thread(target=self._run, name="generate-loop", daemon=True)
        self.loop.start()

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            try:
                prompt, sampling = generation_request(request, self.batched, self.default_max_tokens, self.codec,
                                                      self.generation)
                if sampling.constraint is not None:  # compiled here, off the loop (cached: once per grammar)
                    self.engine.grammars.compile(sampling.constraint)
            except ValueError as exc:
                sender.send(pb_utils.InferenceResponse(error=refusal(pb_utils, exc)), flags=FINAL)
                continue
            self.queued.put((Client(sender, frozenset(request.requested_output_names())), prompt, sampling))
        return None

    def _run(self):
        """The loop: admit, step, respond; waits for requests when nothing runs; ends at finalize."""
        polled = time.monotonic()
        while not self.stopping.is_set():
            try:
                self._admit(wait=not self.clients)
                if time.monotonic() - polled >= self.poll_s:
                    polled = time.monotonic()
                    self._end_cancelled()
                    if self.changed:
                        self.metrics.update(self.engine)
                        self.changed = False
                if self.clients:
                    self._step()
            except Exception as exc:  # noqa: BLE001 - the loop serves every request: it must outlive any failure
                pb_utils.Logger.log_error(f"generate's loop: {exc!r}")

    def _admit(self, wait):
        """Admits what waits and what is queued, in arrival order (waiting up to a poll interval for a request when
        `wait`). A request that named no max_tokens reserves the rest of the context and, when the budget is busy,
        waits here for running generations to free it; any other that does not fit is refused (retry later)."""
        while self.waiting and self._admitted(self.waiting[0]):
            self.waiting.popleft()
        try:
            item = self.queued.get(timeout=self.poll_s) if wait and not self.waiting else self.queued.get_nowait()
        except queue.Empty:
            return
        self.changed = True
        while True:
            if self.waiting or not self._admitted(item):
                self.waiting.append(item)   # behind those waiting longer: none is overtaken
            try:
                item = self.queued.get_nowait()
            except queue.Empty:
                return

    def _admitted(self, item):
        """False when the request waits for the budget; else it runs or was refused (its final response sent)."""
        client, prompt, sampling = item
        key = next(self.ids)
        try:
            self.engine.admit(key, prompt, sampling)
            self.clients[key] = client
        except CacheBudgetError as exc:
            if sampling.max_tokens is None:
                return False
            _final(client.sender, pb_utils.InferenceResponse(error=refusal(pb_utils, exc)))
        except ValueError as exc:
            _final(client.sender, pb_utils.InferenceResponse(error=refusal(pb_utils, exc)))
        return True

    def _end_cancelled(self):
        """Frees the caches of generations whose client cancelled, and ends their requests (waiting ones too)."""
        for key, client in list(self.clients.items()):
            if _cancelled(client.sender):
                self.changed = True
                self.engine.cancel(key)
                del self.clients[key]
                _final_error(client.sender, "the request was cancelled", pb_utils.TritonError.CANCELLED)
        for item in [i for i in self.waiting if _cancelled(i[0].sender)]:
            self.waiting.remove(item)
            _final_error(item[0].sender, "the request was cancelled", pb_utils.TritonError.CANCELLED)

    def _step(self):
        """One engine step over the generations that waited longest (at most max_batch_size), and their responses."""
        started = time.monotonic()
        keys = list(self.clients)
        if self.step_limit and len(keys) > self.step_limit:
            keys = sorted(keys, key=lambda k: self.engine.generations[k].stepped_at)[:self.step_limit]
        try:
            outputs = self.engine.step(keys)
        except Exception as exc:  # noqa: BLE001 - a failed decoder call ends these requests, not the model
            for key in keys:
                self.engine.cancel(key)
                _final_error(self.clients.pop(key).sender, f"decoder step failed: {exc}")
            return
        for out in outputs:
            client = self.clients[out.key]
            if out.finish_reason is None:
                if client.streaming and out.token_ids:  # a prefill chunk adds no token: nothing to say
                    self._send(out.key, self._response(out, out.token_ids, client.wanted))
            else:
                del self.clients[out.key]
                new = out.token_ids if client.streaming else out.generated
                _final(client.sender, self._response(out, new, client.wanted))
        self.metrics.count(len(keys), sum(len(o.token_ids) for o in outputs))
        self.changed = True
        if self.min_step_s:
            time.sleep(max(0.0, self.min_step_s - (time.monotonic() - started)))

    def _send(self, key, response):
        """One response of a running generation; a client the stub can no longer answer ends it."""
        try:
            self.clients[key].sender.send(response)
        except Exception:  # noqa: BLE001 - the stub raises when the request is gone
            self.engine.cancel(key)
            del self.clients[key]

    def _response(self, out, new, wanted):
        """A response adding the token ids `new` (the last of `out.generated`), with their text when asked for;
        only the outputs in `wanted` (all generated ids each token would grow every response)."""
        outputs = generation_outputs(new, out.generated, out.finish_reason or "", self.batched)
        if "token_logprobs" in wanted:   # the final response's: one more, the end token's, when one ended it
            ended = [out.end] if out.end is not None else []
            outputs |= logprob_outputs(out.logprobs[len(out.logprobs) - len(new):] + ended, self.batched)
        if "prompt_logprobs" in wanted:   # with the first token (or the whole answer), empty after
            first = len(new) == len(out.generated)
            outputs |= logprob_outputs(out.prompt_logprobs if first else [], self.batched, PROMPT_LOGPROBS)
        if "text_output" in wanted:
            text = text_delta(self.codec.decode, out.generated, len(new), out.stop, out.finish_reason is not None)
            outputs["text_output"] = batched_output(text_array(text), self.batched)
        return pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(k, v) for k, v in outputs.items()
                                                          if k in wanted])

    def finalize(self):
        """Stops the loop; generations still running or waiting end with an error saying the model is unloading."""
        self.stopping.set()
        self.loop.join(timeout=30)
        for key, client in self.clients.items():
            self.engine.cancel(key)
            _final_error(client.sender, "generate is unloading: the generation stopped")
        for client, _, _ in self.waiting:
            _final_error(client.sender, "generate is unloading: the request had not started")
        self.clients.clear()


def _cancelled(sender):
    """Whether the request was cancelled, or is gone (the stub raises then)."""
    try:
        return sender.is_cancelled()
    except Exception:  # noqa: BLE001
        return True


def _final(sender, response):
    """Ends a response stream with `response`; nothing when it has ended already."""
    try:
        sender.send(response, flags=FINAL)
    except Exception:  # noqa: BLE001 - the stub raises when the response factory is gone
        pass


def _final_error(sender, message, code=None):
    """Ends a response stream with an error (UNAVAILABLE unless `code`)."""
    error = pb_utils.TritonError(message, pb_utils.TritonError.UNAVAILABLE if code is None else code)
    _final(sender, pb_utils.InferenceResponse(error=error))


class Metrics:
    """Custom metrics on Triton's /metrics: live generations, reserved KV bytes, budget, last step's batch,
    tokens and steps, prompt tokens computed, the prefix cache's size and counters, and the grammars' masks and
    their time. Each update is a message to the server, so a step only counts and the loop publishes every
    `cancel_poll_s`."""

    def __init__(self, model):
        labels = {"model": model}
        family = getattr(pb_utils, "MetricFamily", None)
        self.enabled = family is not None
        self.pending_tokens = self.pending_steps = 0
        self.last_batch = 0
        self.published_at = 0.0
        self.published: dict[str, float] = {}  # counters' values at the last publication (engine counts totals)
        if family is None:
            return
        self.families: list = []  # a MetricFamily must outlive its metrics

        def metric(name, text, kind=family.GAUGE):
            self.families.append(family(name=name, description=text, kind=kind))
            return self.families[-1].Metric(labels=labels)

        self.live = metric("llm_generations_live", "Generations holding a KV cache")
        self.reserved = metric("llm_kv_cache_reserved_bytes", "KV-cache bytes reserved by live generations")
        self.budget = metric("llm_kv_cache_budget_bytes", "KV-cache budget (parameter kv_cache_bytes)")
        self.batch = metric("llm_step_batch_size", "Requests in the last generation step")
        self.tokens = metric("llm_generated_tokens_total", "Tokens streamed", family.COUNTER)
        self.steps = metric("llm_steps_total", "Generation steps run (tokens / steps = mean batch)", family.COUNTER)
        self.totals = {  # counters the engine keeps as running totals, by the engine attribute they follow
            "prefilled_tokens": metric("llm_prompt_tokens_computed_total",
                                       "Prompt tokens run through the decoder (not reused)", family.COUNTER),
            "hits": metric("llm_prefix_cache_hits_total", "Requests that reused a cached prefix", family.COUNTER),
            "misses": metric("llm_prefix_cache_misses_total", "Requests that found no cached prefix", family.COUNTER),
            "reused_tokens": metric("llm_prefix_cache_reused_tokens_total",
                                    "Prompt tokens copied from the prefix cache instead of computed", family.COUNTER),
            "evicted_blocks": metric("llm_prefix_cache_evicted_blocks_total",
                                     "16-token blocks evicted from the prefix cache (LRU)", family.COUNTER),
            "masks": metric("llm_grammar_masks_total", "Token masks computed for constrained requests", family.COUNTER),
            "seconds": metric("llm_grammar_mask_seconds_total", "Time spent computing and applying those masks",
                              family.COUNTER),
            "drafted_tokens": metric("llm_draft_tokens_total", "Drafted tokens verified (speculative decoding)",
                                     family.COUNTER),
            "accepted_tokens": metric("llm_draft_accepted_tokens_total", "Drafted tokens accepted: each saved a step",
                                      family.COUNTER)}
        self.prefix_bytes = metric("llm_prefix_cache_bytes", "KV-cache bytes held by cached prefixes")
        self.prefix_budget = metric("llm_prefix_cache_budget_bytes", "Prefix cache budget (prefix_cache_bytes)")

    def count(self, batch, tokens):
        """Called after each step (no server message)."""
        self.last_batch = batch
        if batch:
            self.pending_steps += 1
            self.pending_tokens += tokens

    def update(self, engine):
        """Publishes everything (from the loop thread, which alone touches the engine)."""
        self.published_at = time.monotonic()
        if not self.enabled:
            return
        self.live.set(len(engine.pool))
        self.reserved.set(engine.pool.reserved_bytes)
        self.budget.set(engine.pool.budget_bytes)
        self.batch.set(self.last_batch)
        if self.pending_tokens:
            self.tokens.increment(self.pending_tokens)
        if self.pending_steps:
            self.steps.increment(self.pending_steps)
        self.pending_tokens = self.pending_steps = 0
        prefix = engine.pool.prefix
        self.prefix_bytes.set(prefix.bytes if prefix is not None else 0)
        self.prefix_budget.set(prefix.budget_bytes if prefix is not None else 0)
        timing = engine.grammars.timing
        totals = {"prefilled_tokens": engine.prefilled_tokens, "masks": timing.masks, "seconds": timing.seconds,
                  "drafted_tokens": engine.drafted_tokens, "accepted_tokens": engine.accepted_tokens}
        if prefix is not None:
            totals |= {name: getattr(prefix.stats, name)
                       for name in ("hits", "misses", "reused_tokens", "evicted_blocks")}
        for name, value in totals.items():
            if value > self.published.get(name, 0):
                self.totals[name].increment(value - self.published.get(name, 0))
                self.published[name] = value
