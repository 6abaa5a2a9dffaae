"""The request the smoke test makes up for a model without golden samples: its required inputs, or, when every input is
optional (generate takes its prompt as ids or as text), the first one: a request with no input at all is refused."""
from tritonkit.smoke.inputs import generated_inputs
from tritonkit.triton.model_config import pb


def _config(*inputs: tuple[str, int, bool]) -> pb.ModelConfig:
    config = pb.ModelConfig(name="m", max_batch_size=4)
    for name, data_type, optional in inputs:
        config.input.add(name=name, data_type=data_type, dims=[-1], optional=optional)
    return config


def test_required_inputs_only() -> None:
    made = generated_inputs(_config(("ids", pb.TYPE_INT64, False), ("flag", pb.TYPE_BOOL, True),
                                    ("text", pb.TYPE_STRING, False)))
    assert sorted(made) == ["ids", "text"] and made["ids"].shape == (1, 2)


def test_a_model_with_only_optional_inputs_gets_its_first() -> None:
    made = generated_inputs(_config(("input_ids", pb.TYPE_INT64, True), ("text_input", pb.TYPE_STRING, True)))
    assert list(made) == ["input_ids"] and made["input_ids"].dtype.kind == "i"
