"""The protobuf check catches what protobuf's own text parser (Triton's too) drops without a word.

Each broken text below parses fine with `text_format.Parse` and loses a value; `tritonkit validate` must
refuse it with one line naming the field. The docs repositories must still pass (no false alarms).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tests.cli.cli_contract import assert_one_line_errors, run_subprocess
from tritonkit.errors import TritonkitError
from tritonkit.triton.config_parse import parse_model_config

DOCS = Path(__file__).resolve().parents[1] / "data" / "triton_docs"

PARAMETER = 'parameters: {\n  key: "score_scale"\n  value: { string_value: "0.5" }\n}\n'
LOSSY = {
    "map key twice": ('max_batch_size: 8\nparameters { key: "k" value { string_value: "1" } }\n'
                      'parameters { key: "k" value { string_value: "2" } }\n', "parameters",
                      "key 'k' given more than once"),
    "default then value": ("max_batch_size: 0\nmax_batch_size: 8\n", "max_batch_size (line 2)", "given more than once"),
    "nested default then value": ("dynamic_batching {\n  max_queue_delay_microseconds: 0\n  "
                                  "max_queue_delay_microseconds: 100\n}\n",
                                  "dynamic_batching.max_queue_delay_microseconds (line 3)", "given more than once"),
    "ensemble input_map key twice": ('platform: "ensemble"\nensemble_scheduling { step [ { model_name: "m" '
                                     'model_version: -1\n  input_map { key: "X" value: "a" }\n  input_map { key: "X" '
                                     'value: "b" } } ] }\n',
                                     "ensemble_scheduling.step.input_map", "key 'X' given more than once"),
}


@pytest.mark.parametrize("case", sorted(LOSSY))
def test_text_that_loses_a_value_is_refused(case: str) -> None:
    text, field, problem = LOSSY[case]
    text_format.Parse(text, model_config_pb2.ModelConfig())  # protobuf alone accepts it (and drops a value)
    with pytest.raises(TritonkitError) as caught:
        parse_model_config(text, "config.pbtxt")
    assert caught.value.field == field and caught.value.problem.startswith(problem), caught.value.line()


def test_rendered_text_names_the_spec_field() -> None:
    text, _, _ = LOSSY["map key twice"]
    with pytest.raises(TritonkitError) as caught:
        parse_model_config(text, "tritonkit.yaml", field_prefix="models.scorer.")
    assert caught.value.field == "models.scorer.parameters"


def test_lists_repeated_fields_and_distinct_keys_pass() -> None:
    text = ('max_batch_size: 8\ninput [{ name: "X" data_type: TYPE_FP32 dims: [1, 2] }]\n'
            'parameters { key: "a" value { string_value: "" } }\nparameters { key: "b" value { string_value: "" } }\n'
            "dynamic_batching { preferred_batch_size: [2, 4] preferred_batch_size: 8 }\n")
    config = parse_model_config(text, "config.pbtxt")
    assert list(config.dynamic_batching.preferred_batch_size) == [2, 4, 8] and set(config.parameters) == {"a", "b"}


def test_clean_text_parsed_once_is_what_protobuf_parses() -> None:
    """Text without a problem is parsed once, by the strict twin, and read back as ModelConfig: the message must
    be the one protobuf's own parser (Triton's) gives, maps, enums and defaults included."""
    configs = sorted(DOCS.rglob("config.pbtxt"))
    assert len(configs) >= 10
    for text in [p.read_text() for p in configs] + ["max_batch_size: 0\nparameters { key: \"k\" value { string_value: "
                                                    "\"\" } }\n"]:
        ours = parse_model_config(text, "config.pbtxt")
        theirs = text_format.Parse(text, model_config_pb2.ModelConfig())
        assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
        assert text_format.MessageToString(ours) == text_format.MessageToString(theirs)


def test_validate_refuses_a_docs_config_with_a_parameter_given_twice(tmp_path: Path) -> None:
    shutil.copytree(DOCS / "dynamic_batching", tmp_path / "repo")
    config = tmp_path / "repo" / "priority_scorer" / "config.pbtxt"
    text = config.read_text()
    assert PARAMETER in text
    config.write_text(text + PARAMETER.replace('"0.5"', '"2.0"'))
    lines = assert_one_line_errors(run_subprocess(["validate", "repo"], tmp_path),
                                   "repo/priority_scorer/config.pbtxt: parameters: key 'score_scale' given more than "
                                   "once")
    assert len(lines) == 1
