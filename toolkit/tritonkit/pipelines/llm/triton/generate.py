"""Triton adapter for `generate`: in-flight batched generation (decoupled, iterative sequence batching), the one
model holding the weights (model.onnx in its own folder), for streaming and one-shot requests alike.

A request that asks for `token_ids` gets one response per new token (the `llm` ensemble, streaming clients); one
that does not (the `llm_complete` ensemble) gets a single response, the final one, carrying every generated token:
HTTP `/generate` and one-response gRPC streams work on it, through the same in-flight batches.
Clients may stream from `generate` directly (prompt ids from `preprocess`), asking for `text_output` too: that
is the way to cancel in Triton 2.51, which does not forward an ensemble request's cancellation to its steps.

Each `execute` is one step over the requests Triton scheduled together: new requests are admitted (their KV
cache reserved, or refused with the reason), every request gets one streamed response with its new token,
and unfinished requests are rescheduled so Triton batches their next step with whatever else is running.
The loop itself is `llm_runtime.engine.Engine` (ordinary, tested Python); this file only moves data.
"""
import os
import sys
import threading
import time

import triton_python_backend_utils as pb_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llm_runtime import assets
from llm_runtime.kv_cache import CacheBudgetError
from llm_runtime.loading import load_engine
from llm_runtime.text import text_delta
from llm_runtime.triton_io import (
    RequestError,
    batched_output,
    generation_outputs,
    generation_request,
    refusal,
    request_origin,
    text_array,
)

FINAL = pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL
RESCHEDULE = pb_utils.TRITONSERVER_REQUEST_RELEASE_RESCHEDULE
START = pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START


class TritonPythonModel:
    def initialize(self, args):
        needs = (assets.MODEL_FILE, assets.TOKENIZER_FILE, assets.GENERATION_FILE)
        config, params, folder = assets.model_context(args, needs)
        loaded = load_engine(folder, params)
        self.engine, self.codec, self.default_max_tokens = loaded.engine, loaded.codec, loaded.default_max_tokens
        self.idle_s = assets.sequence_idle_s(config)  # Triton drops a sequence idle this long: so does the engine
        self.batched = config.get("max_batch_size", 0) > 0
        self.expired = {}  # correlation id -> time dropped for idleness: a late return is ended, not restarted
        self.senders = {}  # correlation id -> the response sender of its last step, polled for cancellation
        self.reused = set()  # live correlation ids a refused new request reused: Triton has closed their sequence
        self.origins = {}  # correlation id -> request_origin of the request that started it: a stray differs
        self.poll_s = assets.float_parameter(params, "cancel_poll_s", 0.1)
        self.min_step_s = assets.float_parameter(params, "min_step_s", 0.0)  # tests: a step slower than the idle limit
        self.lock = threading.Lock()  # execute and the sweeper share the engine
        self.metrics = Metrics(args["model_name"])
        self.metrics.update(self.engine)
        self.stopping = threading.Event()
        self.sweeper = threading.Thread(target=self._sweep, name="kv-idle-sweeper", daemon=True)
        self.sweeper.start()

    def _sweep(self):
        """Frees the caches of cancelled requests, and of requests Triton stopped sending back.

        A request cancelled while it waits to be rescheduled is answered by Triton's sequence batcher and never
        reaches `execute` again; its response sender still says it was cancelled, so it is polled here.
        """
        while not self.stopping.wait(self.poll_s):
            with self.lock:  # only generations waiting longer than a poll interval: running ones come back anyway
                now = time.monotonic()
                for key in [k for k in self.senders if k not in self.engine]:
                    del self.senders[key]
                for key in [k for k in self.origins if k not in self.engine]:
                    del self.origins[key]
                waiting = [(k, s) for k, s in self.senders.items()
                           if now - self.engine.generations[k].stepped_at > self.poll_s]
            cancelled = [k for k, sender in waiting if sender.is_cancelled()]  # IPC: outside the lock
            with self.lock:
                for key in cancelled:
                    if key in self.senders:
                        self.engine.cancel(key)
                        del self.senders[key]
                self._expire()
                self.metrics.update(self.engine)

    def _expire(self):
        """Ends generations whose sequence Triton has dropped for idleness (no step for `idle_s`): their request
        never comes back, so the client is told why through the sender of its last step, and the cache is freed."""
        now = time.monotonic()
        for key in self.engine.idle(self.idle_s + self.poll_s, now):
            self._drop(key, self.senders.pop(key, None), now - self.engine.generations[key].stepped_at)
        for key in [k for k, t in self.expired.items() if now - t > 600]:
            del self.expired[key]

    def _drop(self, key, sender, waited):
        """Ends a generation Triton has dropped (or will: it waited past the idle limit) with an error naming why."""
        self.engine.cancel(key)
        self.expired[key] = time.monotonic()
        if sender is not None:
            _final_error(sender, f"generation {key} stopped: Triton dropped its sequence after {waited:.1f} s "
                         f"without a step, over generate's max_sequence_idle_microseconds ({self.idle_s:.1f} s); "
                         "raise max_sequence_idle_microseconds above the longest step, or lower prefill_chunk_tokens")

    def execute(self, requests):
        with self.lock:
            self._execute(requests)

    def _execute(self, requests):
        self._expire()
        running = []
        for request in requests:
            key = request.correlation_id()
            sender = request.get_response_sender()
            origin = request_origin(request)
            if key in self.expired and not request.flags() & START:  # a dropped generation's step after all
                _final_error(sender, f"generation {key} was dropped for idleness (max_sequence_idle_microseconds)")
                continue
            try:
                if request.flags() & START:  # a client's request; a rescheduled step comes back with no flags
                    self._check_new(key)
                else:
                    self._check_continued(key, origin)
                if key not in self.engine:
                    self.engine.admit(key, *generation_request(request, self.batched, self.default_max_tokens))
                    self.origins[key] = origin
            except (ValueError, CacheBudgetError) as exc:
                sender.send(pb_utils.InferenceResponse(error=refusal(pb_utils, exc)), flags=FINAL)
                continue
            running.append((request, sender, key))
        started = time.monotonic()
        since = {key: self.engine.generations[key].stepped_at for _, _, key in running}  # when each was (re)queued
        try:
            outputs = self.engine.step([key for _, _, key in running])
            if running and self.min_step_s:
                time.sleep(max(0.0, self.min_step_s - (time.monotonic() - started)))
        except Exception as exc:  # noqa: BLE001 - a failed decoder call ends these requests, not the model
            for _, sender, key in running:
                self.engine.cancel(key)
                error = pb_utils.TritonError(f"decoder step failed: {exc}")
                sender.send(pb_utils.InferenceResponse(error=error), flags=FINAL)
            return
        for (request, sender, _), out in zip(running, outputs):
            wanted = request.requested_output_names()
            streaming = "token_ids" in wanted  # else one response, the final one, with every generated token
            waited = time.monotonic() - since[out.key]
            if out.finish_reason is None and waited > self.idle_s:  # Triton dropped it: a reschedule is refused
                self._drop(out.key, sender, waited)
            elif out.finish_reason is None:
                if streaming and out.token_ids:  # a prefill chunk adds no token: nothing to say
                    sender.send(self._response(out, out.token_ids, "text_output" in wanted))
                self.senders[out.key] = sender
                request.set_release_flags(RESCHEDULE)
            else:
                self.senders.pop(out.key, None)
                new = out.token_ids if streaming else out.generated
                sender.send(self._response(out, new, "text_output" in wanted), flags=FINAL)
        self.metrics.count(len(running), sum(len(o.token_ids) for o in outputs))
        if self.metrics.due(self.poll_s):  # a busy model publishes here, between steps
            self.metrics.update(self.engine)

    def _check_new(self, key):
        """Refuses a new request whose sequence id is still generating: Triton queues it into the live sequence,
        where it would be taken for that generation's next step (its prompt ignored, the other's tokens streamed)."""
        if key in self.engine:
            self.reused.add(key)
            raise RequestError(f"sequence id {key} is already used by a running generation; "
                               "send no sequence id (Triton gives each request its own) or one no running request uses")
        self.expired.pop(key, None)  # a reused id starts afresh
        self.reused.discard(key)

    def _check_continued(self, key, origin):
        """Refuses a stray request (no START flag) reusing a live id: Triton queues it into the sequence with flags 0
        like a rescheduled step, but its content differs from the request that started the generation. Ends a
        generation whose sequence a refused request reused: Triton 2.51 closes the sequence when that request is
        released, so this step could not be rescheduled and its client would wait forever."""
        if key in self.engine and key not in self.reused and origin != self.origins.get(key, origin):
            self.reused.add(key)
            raise RequestError(f"sequence id {key} is already used by a running generation; "
                               "send no sequence id (Triton gives each request its own) or one no running request uses")
        if key in self.reused and key in self.engine:
            self.reused.discard(key)
            self.engine.cancel(key)
            self.senders.pop(key, None)
            raise RequestError(f"sequence id {key} was reused by a new request, which ends this generation in Triton; "
                               "send no sequence id (Triton gives each request its own) or a unique one")

    def _response(self, out, new, with_text):
        """A response adding the token ids `new` (the last of `out.generated`), with their text when asked for."""
        outputs = generation_outputs(new, out.generated, out.finish_reason or "", self.batched)
        if with_text:
            text = text_delta(self.codec.decode, out.generated, len(new), out.stop, out.finish_reason is not None)
            outputs["text_output"] = batched_output(text_array(text), self.batched)
        return pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(k, v) for k, v in outputs.items()])

    def finalize(self):
        self.stopping.set()
        with self.lock:
            for key in list(self.engine.generations):
                self.engine.cancel(key)


def _final_error(sender, message):
    """Ends a response stream with an UNAVAILABLE error; nothing when it has ended already (its final was sent)."""
    try:
        sender.send(pb_utils.InferenceResponse(error=pb_utils.TritonError(message, pb_utils.TritonError.UNAVAILABLE)),
                    flags=FINAL)
    except Exception:  # noqa: BLE001 - the stub raises when the response factory is gone
        pass


class Metrics:
    """Custom metrics on Triton's /metrics: live generations, reserved KV bytes, budget, last step's batch,
    tokens and steps, prompt tokens computed, and the prefix cache's size and counters. Each update is a message
    to the server, so `execute` only counts and the sweeper thread publishes (every `cancel_poll_s`)."""

    def __init__(self, model):
        labels = {"model": model}
        family = getattr(pb_utils, "MetricFamily", None)
        self.enabled = family is not None
        self.pending_tokens = self.pending_steps = 0
        self.last_batch = 0
        self.published_at = 0.0
        self.published: dict[str, int] = {}  # counters' values at the last publication (engine counts totals)
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
                                     "16-token blocks evicted from the prefix cache (LRU)", family.COUNTER)}
        self.prefix_bytes = metric("llm_prefix_cache_bytes", "KV-cache bytes held by cached prefixes")
        self.prefix_budget = metric("llm_prefix_cache_budget_bytes", "Prefix cache budget (prefix_cache_bytes)")

    def due(self, interval_s):
        """Whether the last publication is older than `interval_s`."""
        return time.monotonic() - self.published_at > interval_s

    def count(self, batch, tokens):
        """Called by execute (no server message)."""
        self.last_batch = batch
        if batch:
            self.pending_steps += 1
            self.pending_tokens += tokens

    def update(self, engine):
        """Publishes everything (called with the engine lock held)."""
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
        totals = {"prefilled_tokens": engine.prefilled_tokens}
        if prefix is not None:
            totals |= {name: getattr(prefix.stats, name)
                       for name in ("hits", "misses", "reused_tokens", "evicted_blocks")}
        for name, value in totals.items():
            if value > self.published.get(name, 0):
                self.totals[name].increment(value - self.published.get(name, 0))
                self.published[name] = value
