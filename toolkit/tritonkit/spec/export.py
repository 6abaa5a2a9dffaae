"""The per-model `source:` and `export:` sections: where a model comes from and how it becomes ONNX/TensorRT."""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from tritonkit.spec.base import StrictModel

_DIM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENTRY_POINT = re.compile(r"^[^:\s]+:[A-Za-z_][A-Za-z0-9_]*$")

def _number_from_text(value: object) -> object:
    """PyYAML reads `1e-4` (no dot) as a string; accept numeric text for tolerances, reject anything else."""
    try:
        return float(value) if isinstance(value, str) else value
    except ValueError:
        return value


Number = Annotated[float, BeforeValidator(_number_from_text)]

ExampleDType = Literal["float32", "float16", "float64", "int64", "int32", "int8", "uint8", "bool"]


class ExampleTensor(StrictModel):
    """A random example input for sources that carry no example of their own (TorchScript, ONNX files)."""

    shape: list[int] = Field(description="Full shape, batch dimension included when the model batches.")
    dtype: ExampleDType = "float32"
    low: float | None = Field(default=None, description="Smallest value (integers: inclusive); default 0 for integers.")
    high: float | None = Field(default=None,
                               description="Largest value (integers: inclusive); default 10 for integers.")

    @field_validator("shape")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(d < 1 for d in value):
            raise ValueError(f"example shapes are concrete sizes >= 1, got {value}")
        return value


class SourceSpec(StrictModel):
    """Exactly one of `python`, `torchscript` or `onnx`: the model before export."""

    python: str | None = Field(default=None, description="Entry point `package.module:function` (or "
                               "`path/to/file.py:function`) returning (torch.nn.Module, example_inputs) with "
                               "example_inputs a tuple or dict of tensors.")
    torchscript: str | None = Field(default=None, description="A TorchScript file "
                                    "(torch.jit.save), relative to the spec.")
    onnx: str | None = Field(default=None, description="An existing ONNX file, relative to the spec.")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for the python entry point.")
    python_path: list[str] = Field(default_factory=lambda: ["."], description="Folders (relative to the spec) put on "
                                   "sys.path to import the entry point.")
    weights: list[str] = Field(default_factory=list, description="Files or folders the entry point reads outside "
                               "Python's open() (e.g. safetensors), hashed for the export cache; files read with "
                               "open() and imported code are found automatically.")
    example_inputs: dict[str, ExampleTensor] = Field(default_factory=dict, description="Inputs in forward order, for "
                                                     "torchscript/onnx sources.")

    @model_validator(mode="after")
    def _exactly_one(self) -> SourceSpec:
        given = [k for k in ("python", "torchscript", "onnx") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of python, torchscript, onnx" + (f" (got {', '.join(given)})" if given else "")
            )
        if self.python and not _ENTRY_POINT.match(self.python):
            raise ValueError(f"python entry point {self.python!r} must look like 'package.module:function'")
        if self.kwargs and not self.python:
            raise ValueError("kwargs only apply to a python entry point")
        return self

    @property
    def kind(self) -> Literal["python", "torchscript", "onnx"]:
        return "python" if self.python else "torchscript" if self.torchscript else "onnx"


class Tolerance(StrictModel):
    """Elementwise bound |onnx - torch| <= atol + rtol * |torch| (numpy.allclose semantics)."""

    atol: Number = Field(default=1e-4, ge=0)
    rtol: Number = Field(default=1e-4, ge=0)


class ToleranceSpec(Tolerance):
    """The default tolerance plus per-output overrides (keys are output names)."""

    outputs: dict[str, Tolerance] = Field(default_factory=dict)

    def for_output(self, name: str) -> Tolerance:
        return self.outputs.get(name, Tolerance(atol=self.atol, rtol=self.rtol))


class VerifySpec(StrictModel):
    """Which shapes verification runs besides the example: batch sizes and dynamic lengths."""

    batch_sizes: list[int] | None = Field(default=None, description="Default: 1 and max_batch_size.")
    lengths: dict[str, list[int]] = Field(default_factory=dict, description="Sizes per dynamic dim name, e.g. {seq: "
                                          "[8, 64]}; default: half and double the example.")
    golden_samples: int = Field(default=4, ge=0, description="Verified input/output pairs kept under <model>/golden/.")
    seed: int = 0

    @field_validator("batch_sizes")
    @classmethod
    def _batch_positive(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and any(b < 1 for b in value):
            raise ValueError(f"batch sizes must be >= 1, got {value}")
        return value

    @field_validator("lengths")
    @classmethod
    def _lengths_positive(cls, value: dict[str, list[int]]) -> dict[str, list[int]]:
        for name, sizes in value.items():
            if not sizes or any(s < 1 for s in sizes):
                raise ValueError(f"lengths for '{name}' must be a non-empty list of sizes >= 1, got {sizes}")
        return value


class TensorRTProfile(StrictModel):
    """One optimization profile: full shapes (batch included) per input name."""

    min: dict[str, list[int]]
    opt: dict[str, list[int]]
    max: dict[str, list[int]]

    @model_validator(mode="after")
    def _ordered(self) -> TensorRTProfile:
        if not (set(self.min) == set(self.opt) == set(self.max)):
            raise ValueError("min, opt and max must name the same inputs")
        for name in self.min:
            lo, mid, hi = self.min[name], self.opt[name], self.max[name]
            if not (len(lo) == len(mid) == len(hi)):
                raise ValueError(f"input '{name}': min, opt and max must have the same rank")
            if any(not (a <= b <= c) for a, b, c in zip(lo, mid, hi)):
                raise ValueError(f"input '{name}': need min <= opt <= max in every dim, got {lo} / {mid} / {hi}")
        return self


class TensorRTSpec(StrictModel):
    """The TensorRT engine is built here (`local`, needs TensorRT and a GPU) or by trtexec at deploy (`deferred`)."""

    mode: Literal["local", "deferred"] = "local"
    fp16: bool = False
    int8: bool = Field(default=False, description="Needs a Q/DQ (explicitly quantized) graph; no calibrator is run.")
    workspace_mb: int = Field(default=1024, gt=0)
    profiles: list[TensorRTProfile] = Field(default_factory=list, description="Default: one profile from batch "
                                            "1..max_batch_size and the verify lengths.")


class QuantizeSpec(StrictModel):
    """Weight-only quantization of an ONNX export (onnxruntime's MatMulNBits and GatherBlockQuantized)."""

    # A pipeline may add a section judging the quantized graph against the float one (`Pipeline.quantize`,
    # spec/schema.py), e.g. the llm's `lm:`.

    weights: Literal["int4", "int8"] = Field(default="int4", description=(
        "Bits of every MatMul weight. At int4, weights that already are 4-bit blocks of block_size (a GGUF Q4_1 "
        "model dequantized) are carried over exactly, whatever `symmetric` says."))
    block_size: Literal[16, 32, 64, 128, 256] = Field(
        default=32, description="Weights per block (one scale, one zero point), along the reduced axis.")
    symmetric: bool = Field(
        default=True, description="true: scale absmax / (2^(bits-1) - 1), the op's default zero point; false: "
        "each block's min..max on 2^bits levels with an integer zero point.")
    embedding: Literal["int8", "int4", "float32"] = Field(
        default="int8", description="Token embeddings (Gather from a weight) and an output head tied to one: they "
        "shape every logit, so the default keeps them at 8 bits as llama.cpp does (symmetric).")
    head_rescore_top_k: int = Field(
        default=0, ge=0, description="With embedding: int8, an output head tied to the embedding runs at int4 and "
        "its this many largest logits are computed again from the embedding's 8-bit rows: the head reads half the "
        "bytes, the logits sampling picks from stay the 8-bit ones and the rest are int4 (the SmolLM2 example uses "
        "64). The other logits move by the int4 head's error: `tolerance` may need a larger logits "
        "atol. 0: the head at the embedding's bits.")
    tolerance: ToleranceSpec = Field(
        default_factory=lambda: ToleranceSpec(atol=0.1, rtol=0.1),
        description="|quantized - PyTorch| bound at every verify case (the float graph keeps export.tolerance).")

    @model_validator(mode="after")
    def _rescore_from_int8(self) -> QuantizeSpec:
        if self.head_rescore_top_k and self.embedding != "int8":
            raise ValueError(f"head_rescore_top_k computes the head's top logits again from the embedding's 8-bit "
                             f"rows, and embedding is {self.embedding}; set embedding: int8 or head_rescore_top_k: 0")
        return self

    @property
    def bits(self) -> int:
        return 4 if self.weights == "int4" else 8

    @property
    def embedding_bits(self) -> int | None:
        return {"int4": 4, "int8": 8}.get(self.embedding)


def _none_is_float(value: object) -> object:
    """`quantize: none` (or false) keeps float32 weights."""
    return None if value in ("none", False) else value


class ExportSpec(StrictModel):
    """How a source becomes the served model file, and how the result is verified."""

    format: Literal["onnx", "tensorrt", "torch_tensorrt"] = "onnx"
    exporter: Literal["auto", "dynamo", "torchscript"] = Field(
        default="auto", description="auto: torch.export (dynamo) first, the TorchScript exporter when it fails."
    )
    opset: Literal[17, 18] = 18
    input_names: list[str] | None = Field(default=None, description="Rename inputs (forward order).")
    output_names: list[str] | None = Field(default=None, description="Name outputs (flattened order).")
    dynamic_axes: dict[str, dict[int, str]] = Field(default_factory=dict, description="Named dynamic dims besides the "
                                                    "batch axis, e.g. {input_ids: {1: seq}}; a key with * names every "
                                                    "tensor it matches, e.g. {past_key_*: {2: past}}.")
    external_data: Literal["auto", "always"] = Field(default="auto", description="auto: weights go to model.onnx.data "
                                                     "only when the model is over 2 GB.")
    tolerance: ToleranceSpec = Field(default_factory=ToleranceSpec)
    verify: VerifySpec = Field(default_factory=VerifySpec)
    config_io: Literal["graph", "own"] = Field(default="graph", description="graph: the config's inputs/outputs are "
                                               "the exported graph's (checked against it). own: a Python model runs "
                                               "the exported file itself behind inputs/outputs of its own (e.g. the "
                                               "LLM engine `generate`): they are not checked against the graph, and "
                                               "no golden samples are kept (they hold the graph's).")
    quantize: Annotated[QuantizeSpec | None, BeforeValidator(_none_is_float)] = Field(
        default=None, description="Weight-only quantization of the ONNX graph, verified against PyTorch and, for an "
        "LM (`lm:`), against the float graph; none (the default) keeps float32.")
    timeout_s: float = Field(default=900.0, gt=0, description="Wall-clock limit of the isolated export process.")
    tensorrt: TensorRTSpec = Field(default_factory=TensorRTSpec)

    @field_validator("dynamic_axes", mode="before")
    @classmethod
    def _axis_keys(cls, value: object) -> object:
        """Axis keys arrive as strings from JSON (and quoted YAML): '1' -> 1."""
        if isinstance(value, dict):
            return {t: ({int(a) if isinstance(a, str) and a.isdigit() else a: d for a, d in axes.items()}
                        if isinstance(axes, dict) else axes) for t, axes in value.items()}
        return value

    @field_validator("dynamic_axes")
    @classmethod
    def _dim_names(cls, value: dict[str, dict[int, str]]) -> dict[str, dict[int, str]]:
        for tensor, axes in value.items():
            for axis, dim in axes.items():
                if axis < 0:
                    raise ValueError(f"'{tensor}': axis {axis} must be >= 0")
                if not _DIM_NAME.match(dim):
                    raise ValueError(f"'{tensor}': dim name {dim!r} must be an identifier such as seq")
        return value

    @field_validator("input_names", "output_names")
    @classmethod
    def _distinct(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError(f"names must be distinct, got {value}")
        return value

    @model_validator(mode="after")
    def _quantize_onnx_only(self) -> ExportSpec:
        if self.quantize is not None and self.format != "onnx":
            raise ValueError(f"quantize applies to format: onnx (MatMulNBits), not {self.format}; remove "
                             "quantize or use format: onnx")
        return self
