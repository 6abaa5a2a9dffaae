"""Request inputs the smoke test makes up for models without golden samples, and deliberately bad ones."""
import numpy as np

from tritonkit.triton.datatypes import numpy_dtype
from tritonkit.triton.model_config import pb

VARIABLE_DIM = 2


def generated_inputs(config: pb.ModelConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Small random data for every required input (batch 1 when the model batches; -1 dims become 2); for a model
    whose inputs are all optional (one of several may be sent, e.g. ids or text), its first one: a request needs one."""
    rng = np.random.default_rng(seed)
    out = {}
    sent = [t for t in config.input if not t.optional] or list(config.input[:1])
    for t in sent:
        shape = ([1] if config.max_batch_size > 0 else []) + [VARIABLE_DIM if d == -1 else d for d in t.dims]
        dtype = numpy_dtype(t.data_type)
        if dtype.kind == "O":
            out[t.name] = np.full(shape, b"tritonkit", dtype=object)
        elif dtype.kind == "b":
            out[t.name] = rng.integers(0, 2, size=shape).astype(bool)
        elif dtype.kind in "iu":
            out[t.name] = rng.integers(1, 4, size=shape).astype(dtype)
        else:
            out[t.name] = rng.standard_normal(shape).astype(dtype)
    return out


def with_wrong_dtype(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same request with the first input cast to a type the model does not declare."""
    name, value = next(iter(inputs.items()))
    wrong = np.float64 if value.dtype != np.float64 else np.int8
    return {**inputs, name: np.zeros(value.shape, dtype=wrong)}


def with_wrong_shape(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same request with an extra dimension on the first input."""
    name, value = next(iter(inputs.items()))
    return {**inputs, name: np.repeat(value[..., np.newaxis], 3, axis=-1)}


def without_first_input(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same request with its first required input left out."""
    return dict(list(inputs.items())[1:])
