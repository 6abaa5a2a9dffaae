"""Constrained decoding in the engine, on the tiny GPT (random weights: only the grammar makes its output parse): each
kind of grammar is matched, greedy and sampled; a constrained row beside unconstrained ones leaves their tokens as
they are alone; grammars compile once; bad ones are refused naming the input."""
from __future__ import annotations

import json
import re

import jsonschema
import numpy as np
import pytest

from tests.llm.test_engine import PROMPTS, make_engine
from tritonkit.pipelines.llm.runtime.engine import STOP
from tritonkit.pipelines.llm.runtime.grammar import Constraint
from tritonkit.pipelines.llm.runtime.loading import load_engine
from tritonkit.pipelines.llm.runtime.requests import sampling_params
from tritonkit.pipelines.llm.runtime.sampling import SamplingParams

pytest.importorskip("llguidance")

#: Bounded schemas (strings with a maxLength, arrays with maxItems): a random model ends them within max_tokens.
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["ok", "n", "color", "tag", "items"],
          "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer", "minimum": -5, "maximum": 99},
                         "color": {"enum": ["red", "green", "blue"]}, "tag": {"type": "string", "maxLength": 4},
                         "items": {"type": "array", "maxItems": 2, "items": {"type": "integer", "minimum": 0,
                                                                              "maximum": 9}}}}
REGEX = r"[a-c]{3}-[0-9]{2}"
CHOICES = ["yes", "no", "maybe so", 'quote " and \\ slash', "é|x"]
LARK = 'start: "(" num ("," num)* ")"\nnum: /[0-9]{1,2}/'


@pytest.fixture(scope="module")
def engine(tiny):
    """The engine generate runs (load_engine: grammars from the model's tokenizer)."""
    return load_engine(tiny, {"intra_op_thread_count": "1"}).engine


def generate(engine, codec, prompt: str, params: SamplingParams) -> tuple[str, str]:
    out = engine.run({"x": (codec.encode(prompt), params)})["x"]
    return codec.decode(out.generated), out.finish_reason


def check(constraint: Constraint, text: str) -> None:
    """The text matches its constraint."""
    if constraint.kind == "json_schema":
        jsonschema.validate(json.loads(text), json.loads(constraint.source))
    elif constraint.kind == "regex":
        assert re.fullmatch(constraint.source, text), text
    elif constraint.kind == "choice":
        assert text in json.loads(constraint.source)
    else:
        assert re.fullmatch(r"\(\d{1,2}(,\d{1,2})*\)", text), text


CONSTRAINTS = [Constraint("json_schema", json.dumps(SCHEMA)), Constraint("regex", REGEX),
               Constraint("choice", json.dumps(CHOICES)), Constraint("grammar", LARK)]


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=lambda c: c.kind)
@pytest.mark.parametrize("temperature", [0.0, 1.5])
def test_every_kind_of_grammar_is_matched(engine, codec, constraint, temperature):
    for seed, prompt in enumerate(PROMPTS[:4]):
        params = SamplingParams(max_tokens=120, temperature=temperature, seed=seed, constraint=constraint)
        text, reason = generate(engine, codec, prompt, params)
        assert reason == STOP, (prompt, text)
        check(constraint, text)


def test_json_mode_gives_an_object(engine, codec):
    params = SamplingParams(max_tokens=40, constraint=Constraint("json_schema", '{"type": "object"}'))
    text, _ = generate(engine, codec, "Hello", params)
    assert text.startswith("{")  # a random model may not close it within max_tokens; every prefix is valid so far


def test_a_constrained_row_leaves_the_rows_beside_it_as_they_are_alone(engine, codec):
    free = {i: SamplingParams(max_tokens=24, ignore_eos=True) if i % 2 else
            SamplingParams(max_tokens=24, temperature=1.2, seed=i) for i in range(6)}
    alone = {i: generate(engine, codec, PROMPTS[i], free[i]) for i in free}
    constrained = {f"c{j}": SamplingParams(max_tokens=60, temperature=0.8 * j, seed=j, constraint=c)
                   for j, c in enumerate(CONSTRAINTS)}
    constrained_alone = {k: generate(engine, codec, PROMPTS[7], p) for k, p in constrained.items()}
    requests = {i: (codec.encode(PROMPTS[i]), free[i]) for i in free}
    requests |= {k: (codec.encode(PROMPTS[7]), p) for k, p in constrained.items()}
    together = engine.run(requests)
    assert {i: (codec.decode(together[i].generated), together[i].finish_reason) for i in free} == alone
    assert {k: (codec.decode(together[k].generated), together[k].finish_reason) for k in constrained} == \
        constrained_alone


def test_the_mask_touches_only_its_own_row(engine, codec):
    """The logits rows handed to the other generations are bit for bit what the decoder returned."""
    captured = {}
    advance = engine._advance

    def spy(generation, tails, drafted):
        out = advance(generation, tails, drafted)
        captured[generation.key] = tails[-1].copy()  # as the sampler saw it (no drafts: one row)
        return out

    engine._advance = spy
    try:
        engine.admit("free", codec.encode("probe one"), SamplingParams(max_tokens=1))  # one call: the same length
        engine.admit("json", codec.encode("probe two"), SamplingParams(max_tokens=1, constraint=CONSTRAINTS[0]))
        tails = engine.decoder.tails
        raw = {}

        def decoder_tails(rows):
            out = tails(rows)
            raw["logits"] = out[:, -1].copy()
            return out

        engine.decoder.tails = decoder_tails
        engine.step(["free", "json"])
    finally:
        engine._advance = advance
        del engine.decoder.tails
    assert np.array_equal(captured["free"], raw["logits"][0])
    masked = captured["json"]
    assert np.isneginf(masked).sum() > masked.size // 2 and np.isfinite(masked[codec.encode("{")[0]])


def test_a_grammar_compiles_once(engine, codec):
    constraint = Constraint("regex", "[0-9]{4}")
    first = engine.grammars.compile(constraint)
    for _ in range(3):
        text, _ = generate(engine, codec, "Year:", SamplingParams(max_tokens=8, constraint=constraint))
        assert re.fullmatch("[0-9]{4}", text)
    assert engine.grammars.compile(Constraint("regex", "[0-9]{4}")) is first


@pytest.mark.parametrize("constraint, message", [
    (Constraint("json_schema", '{"type": "strin"}'), "json_schema does not compile: Invalid type: strin"),
    (Constraint("json_schema", '{"type": "integer", "minimum": 5, "maximum": 1}'), "json_schema does not compile"),
    (Constraint("json_schema", "{"), "json_schema is not valid JSON"),
    (Constraint("json_schema", "[1]"), "json_schema must be a JSON object"),
    (Constraint("regex", "a(b"), 'regex does not compile: invalid regex "a\\(b": unclosed group'),
    (Constraint("grammar", "start: foo"), 'grammar does not compile: .*unknown name: "foo"'),
])
def test_a_grammar_that_does_not_compile_is_refused_naming_the_input(engine, codec, constraint, message):
    with pytest.raises(ValueError, match=message):
        engine.admit("bad", codec.encode("Hi"), SamplingParams(constraint=constraint))
    assert "bad" not in engine and engine.pool.reserved_bytes == 0


def test_request_inputs_and_parameters_give_the_constraint():
    schema = json.dumps(SCHEMA)
    assert sampling_params({"json_schema": np.array([schema.encode()], dtype=object)}, {}).constraint == \
        Constraint("json_schema", schema)
    assert sampling_params({}, {"regex": REGEX}).constraint == Constraint("regex", REGEX)
    choice = sampling_params({"choice": np.array([c.encode() for c in CHOICES], dtype=object)}, {}).constraint
    assert choice == Constraint("choice", json.dumps(CHOICES, ensure_ascii=False))
    assert sampling_params({}, {"choice": json.dumps(CHOICES)}).constraint == choice
    assert sampling_params({}, {}).constraint is None


@pytest.mark.parametrize("inputs, params, message", [
    ({}, {"regex": "a", "grammar": "start: \"a\""}, "send one of json_schema, regex, choice, grammar; this request "
                                                    "has regex and grammar"),
    ({"choice": np.array([], dtype=object)}, {}, "choice must list at least one non-empty string"),
    ({}, {"regex": ""}, "regex is empty"),
    ({}, {"regex": "a+", "ignore_eos": True}, "ignore_eos cannot be combined with regex"),
])
def test_bad_constraint_requests_are_named(inputs, params, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        sampling_params(inputs, params).validate()


def test_an_engine_without_grammars_refuses_constrained_requests(decoder, tiny, codec):
    with pytest.raises(ValueError, match="regex needs the tokenizer"):
        make_engine(decoder, tiny, codec).admit("x", codec.encode("Hi"), SamplingParams(constraint=CONSTRAINTS[1]))
