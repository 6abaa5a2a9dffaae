"""Finds models of a built repository that read another model's folder, which fails where the repository is deployed.

Triton reading an `s3://` repository downloads each model into a temporary folder of its own, so `..` of a
model's folder holds no sibling there; only KServe's storage initializer copies the repository whole. Two signs,
both read from the files Triton gets (no code runs):
- a parameter of the names tritonkit's pipelines once used for it (`vocab_models`, `graph_model`,
  `decoder_model`) naming another model of the repository;
- Python code of a Python-backend model (model.py and every .py file beside it) that goes above the model's
  folder: `.parent`, `.parents[...]`, `os.path.dirname` or a `..` part applied to `args["model_repository"]`
  (or a name that holds it, in the same file or passed into a function of another of the model's files), or to
  `__file__` more levels up than the file sits below the model's folder.
The other model and the file are named when the code's string constants name a file that a sibling holds
(e.g. "vocab.json" and speech/1/vocab.json); otherwise the problem names the line that goes above the folder.
"""
import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tritonkit.errors import Problem, shown_path
from tritonkit.triton.model_config import pb

#: Parameters that named the sibling a model read a file from, and that file.
SIBLING_PARAMETERS = {"vocab_models": "vocab.json", "graph_model": "TLG.fst", "decoder_model": "generation.json"}
REPOSITORY_KEY = "model_repository"
#: Calls that keep the path they wrap: Path(x), str(x), x.resolve(), os.path.abspath(x), ...
PATH_WRAPPERS = ("Path", "PurePath", "PurePosixPath", "str", "fspath", "resolve",
                 "absolute", "abspath", "realpath", "normpath", "expanduser")
#: Rounds of following names through assignments and calls (helpers rarely pass a folder on more than twice).
MAX_ROUNDS = 8


@dataclass(frozen=True)
class Climb:
    """One expression of a model's Python code that reaches above the model's folder."""

    file: Path
    line: int
    code: str


def sibling_reads(root: Path, configs: dict[str, pb.ModelConfig]) -> list[Problem]:
    """One problem per model of the repository at `root` that reads another model's folder."""
    problems = []
    for name, config in sorted(configs.items()):
        shown = shown_path(root / name / "config.pbtxt")
        found = _parameter_read(name, config, configs)
        if found:
            key, other, file = found
            problems.append(Problem(shown, f"parameters.{key}", f"model '{name}' reads {file} from model '{other}''s "
                                    "folder, which Triton from s3:// downloads apart from it",
                                    _fix(name, other, file, f"and drop parameter {key}")))
            continue
        if config.backend != "python":
            continue
        climb = next(_climbs(root / name), None)
        if climb:
            sibling, read = _named_sibling(root, name, configs)
            where = f"{shown_path(climb.file)}:{climb.line} ({climb.code})"
            if sibling:
                problems.append(Problem(shown, "files", f"model '{name}' reads {read} from model '{sibling}''s folder "
                                        f"at {where}, which Triton from s3:// downloads apart from it",
                                        _fix(name, sibling, read, "and read it there")))
            else:
                problems.append(Problem(shown, "files", f"model '{name}' reads above its own folder at {where}: "
                                        "another model's folder, which Triton from s3:// downloads apart from it",
                                        f"give '{name}' its own copy of what it reads (files: {{<file>: "
                                        "model:<other>/<file>}) and read it from its own version folder"))
    return problems


def _fix(name: str, other: str, file: str, then: str) -> str:
    return f"give '{name}' its own copy in its version folder (files: {{{file}: model:{other}/{file}}}) {then}"


def _parameter_read(name: str, config: pb.ModelConfig,
                    configs: dict[str, pb.ModelConfig]) -> tuple[str, str, str] | None:
    """(parameter, other model, file) of a sibling-naming parameter, else None."""
    for key, file in SIBLING_PARAMETERS.items():
        if key in config.parameters:
            for other in config.parameters[key].string_value.split():
                if other != name and other in configs:
                    return key, other, file
    return None


def _python_files(model_dir: Path) -> list[Path]:
    return sorted(p for p in model_dir.rglob("*.py") if p.is_file() and "__pycache__" not in p.parts)


def _climbs(model_dir: Path) -> Iterator[Climb]:
    """Expressions of the model's Python files that reach above `model_dir`."""
    trees = {path: _parse(path) for path in _python_files(model_dir)}
    depths = {path: len(path.relative_to(model_dir).parts) for path in trees}   # __file__'s levels below model_dir
    names = _folder_names(trees, depths)
    for path, tree in trees.items():
        above = [node for node in ast.walk(tree) if isinstance(node, ast.expr)
                 and (level := _level(node, names[path], depths[path])) is not None and level < 0]
        ids = {id(node) for node in above}
        # where it goes up: not a name holding such a path, nor a path built on one (`Path(up) / "x"`)
        climbs = [node for node in above if not isinstance(node, ast.Name)
                  and not any(id(sub) in ids for sub in ast.walk(node) if sub is not node)]
        if climbs:
            first = min(climbs, key=lambda node: (node.lineno, node.col_offset))
            yield Climb(path, first.lineno, ast.unparse(first)[:80])


def _folder_names(trees: dict[Path, ast.AST], depths: dict[Path, int]) -> dict[Path, dict[str, int]]:
    """Per file, names holding a path inside the model folder and its level below it: assigned from one, or
    parameters of any of the model's functions called with one (followed for a few rounds; the lowest level wins)."""
    functions: dict[str, list[tuple[Path, ast.FunctionDef | ast.AsyncFunctionDef]]] = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, []).append((path, node))
    names: dict[Path, dict[str, int]] = {path: {} for path in trees}

    def note(where: Path, name: str, level: int | None) -> bool:
        if level is None or names[where].get(name, level + 1) <= level:
            return False
        names[where][name] = level
        return True

    for _ in range(MAX_ROUNDS):
        changed = False
        for path, tree in trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign):
                    level = _level(node.value, names[path], depths[path])
                    changed |= any([note(path, t.id, level) for t in node.targets if isinstance(t, ast.Name)])
                elif isinstance(node, ast.Call):
                    for where, param, value in _arguments(node, functions):
                        changed |= note(where, param, _level(value, names[path], depths[path]))
        if not changed:
            break
    return names


def _arguments(call: ast.Call, functions: dict) -> Iterator[tuple[Path, str, ast.expr]]:
    """(file, parameter, argument) for each argument of a call to one of the model's functions (by name)."""
    for path, func in functions.get(_call_name(call) or "", []):
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if params[:1] == ["self"] and isinstance(call.func, ast.Attribute):
            params = params[1:]
        yield from ((path, params[i], arg) for i, arg in enumerate(call.args) if i < len(params))
        yield from ((path, kw.arg, kw.value) for kw in call.keywords if kw.arg)


def _level(node: ast.AST, names: dict[str, int], file_depth: int) -> int | None:
    """Levels below the model folder of the path `node` holds (negative: above it), None when it holds none."""
    if isinstance(node, ast.Name):
        return file_depth if node.id == "__file__" else names.get(node.id)
    if isinstance(node, ast.Subscript):
        if isinstance(node.slice, ast.Constant) and node.slice.value == REPOSITORY_KEY:
            return 0
        if isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            index = key.value if isinstance(key := node.slice, ast.Constant) and isinstance(key.value, int) else 0
            inner = _level(node.value.value, names, file_depth)
            return None if inner is None else inner - index - 1
        return None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _level(node.value, names, file_depth)
        return None if inner is None else inner - 1
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _joined(_level(node.left, names, file_depth), [node.right])
    if isinstance(node, ast.Call):
        return _call_level(node, names, file_depth)
    return None


def _call_level(call: ast.Call, names: dict[str, int], file_depth: int) -> int | None:
    name = _call_name(call)
    if name == "get" and call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == REPOSITORY_KEY:
        return 0   # args.get("model_repository")
    if name in PATH_WRAPPERS:
        target = call.args[0] if call.args else call.func.value if isinstance(call.func, ast.Attribute) else None
        return None if target is None else _level(target, names, file_depth)
    if name == "dirname" and call.args:
        inner = _level(call.args[0], names, file_depth)
        return None if inner is None else inner - 1
    if name == "join" and call.args:  # os.path.join(base, ...); a thread's join(timeout=...) has none
        return _joined(_level(call.args[0], names, file_depth), call.args[1:])
    if name == "joinpath" and isinstance(call.func, ast.Attribute):
        return _joined(_level(call.func.value, names, file_depth), call.args)
    return None


def _joined(level: int | None, parts: list[ast.expr]) -> int | None:
    """The level after joining `parts` onto a path at `level`: one down per part (a constant's own parts counted,
    `..` one up); the lowest level on the way when it is above the model folder (`x / ".." / "other"` climbs)."""
    if level is None:
        return None
    lowest = level
    for part in parts:
        text = part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else None
        steps = text.replace("\\", "/").split("/") if text is not None else ["?"]
        for step in steps:
            level += -1 if step == ".." else 0 if step in ("", ".") else 1
            lowest = min(lowest, level)
    return lowest if lowest < 0 else level


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _named_sibling(root: Path, name: str, configs: dict[str, pb.ModelConfig]) -> tuple[str | None, str]:
    """(other model, file) when the model's strings (code and parameters) name a file a sibling holds; siblings the
    strings name come first (a config.pbtxt or model.onnx is in every folder)."""
    texts = {n.value for path in _python_files(root / name) for n in ast.walk(_parse(path))
             if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    texts |= {word for value in configs[name].parameters.values() for word in value.string_value.split()}
    # "speech/1/vocab.json" names vocab.json
    constants = {part for text in texts for part in text.replace("\\", "/").split("/")}
    for other in sorted((m for m in configs if m != name), key=lambda m: (m not in constants, m)):
        held = {p.name for pattern in ("*", "*/*") for p in (root / other).glob(pattern) if p.is_file()}
        for file in sorted(held & constants - {"model.py"}):
            return other, file
    return None, ""


def _parse(path: Path) -> ast.AST:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return ast.Module(body=[], type_ignores=[])
