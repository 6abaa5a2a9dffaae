"""Tiny model repositories written to a temp folder and checked with `check_repository`, as `tritonkit validate`
checks them: every error and warning as its one-line message, with the repository prefix cut off."""
from __future__ import annotations

from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.validate.repository_check import check_repository

#: A model: its config.pbtxt text and its other files ({path in the model folder: text or bytes}; a path ending in
#: '/' is a folder).
Model = tuple[str, dict[str, str | bytes]]


def onnx_graph(inputs: dict[str, tuple[int, list[int | None]]],
               outputs: dict[str, tuple[int, list[int | None]]] | None = None) -> bytes:
    """A real ONNX model whose graph has these inputs and outputs ({name: (TensorProto type, shape; None is a
    symbolic dimension)}); each output is an Identity of the first input, which onnx accepts whatever the types."""
    from onnx import helper

    outputs = outputs if outputs is not None else {}
    first = next(iter(inputs))
    nodes = [helper.make_node("Identity", [first], [name]) for name in outputs]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
                              [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()])
    return helper.make_model(graph).SerializeToString()


#: The graph of the layout tests' ONNX config: IN -> OUT, FP32 [batch, 4].
GRAPH = onnx_graph({"IN": (1, [None, 4])}, {"OUT": (1, [None, 4])})


def python(io: str, head: str = "max_batch_size: 8\n", files: dict[str, str] | None = None) -> Model:
    """A Python-backend model with `io` and version 1 holding model.py."""
    return f'backend: "python"\n{head}{io}', {"1/model.py": ""} if files is None else files


def tensor(kind: str, name: str, dims: str, dtype: str = "TYPE_FP32") -> str:
    return f'{kind} [{{name: "{name}" data_type: {dtype} dims: {dims}}}]\n'


def write(root: Path, models: dict[str, Model]) -> Path:
    """The repository `models` describes, under `root`."""
    for name, (config, files) in models.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "config.pbtxt").write_text(config, encoding="utf-8")
        for rel, text in files.items():
            path = folder / rel
            if rel.endswith("/"):
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(text, bytes):
                    path.write_bytes(text)
                else:
                    path.write_text(text, encoding="utf-8")
    return root


def outcome(root: Path, models: dict[str, Model]) -> tuple[list[str], list[str]]:
    """(errors, warnings) of the repository, each `model/config.pbtxt: field: problem; fix`."""
    repo = write(root, models)
    try:
        warnings = check_repository(repo).warnings
    except TritonkitError as exc:
        return [_short(p.line(), repo) for p in exc.problems], []
    return [], [_short(w.line(), repo) for w in warnings]


def _short(line: str, repo: Path) -> str:
    shown = str(repo)
    for prefix in (shown + "/", repo.name + "/"):
        if prefix in line:
            return line[line.index(prefix) + len(prefix):]
    return line
