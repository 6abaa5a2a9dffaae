"""The contract runs one way: the core (every module outside pipelines/) imports no pipeline, names none of them nor
their models, tensors or parameters in its code, and no import circle remains but type-only ones."""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.pipelines.import_graph import PACKAGE, circles, edges
from tritonkit.package_files import package_path
from tritonkit.spec.loader import load_project

#: The pipelines whose names the core once held (pipeline names, model, tensor and parameter names of their starters).
NAMED = ("llm", "asr", "tts")
#: Words of those starters that the core uses in a sense of its own.
CORE_WORDS = {
    "text", "audio", "tokens", "choice", "seed", "stop", "spin", "top_k",   # ordinary words: JSON keys, commands
    "generate",   # Starter.generate: the files init writes by code
    "intra_op_thread_count", "allow_spinning",   # onnxruntime's own settings: the fallback runner, the threads knob
    "max_tokens",   # the length of tune's measuring streams (--max-tokens)
}
#: Circles of imports inside one pipeline, which the contract does not reach.
PIPELINE_CIRCLES: list[list[str]] = []


def _core() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] != "pipelines"]


def _pipeline_names() -> set[str]:
    """The NAMED pipelines and their starters' model, tensor and parameter names."""
    found = set(NAMED)
    for name in NAMED:
        for model, spec in load_project(package_path(f"pipelines/{name}/starter/tritonkit.yaml")).models.items():
            found |= {model, *(t.name for t in spec.input), *(t.name for t in spec.output), *spec.parameters}
    return found - CORE_WORDS


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                                          ast.AsyncFunctionDef))]
    return {id(n.body[0].value) for n in nodes if n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant) and isinstance(n.body[0].value.value, str)}


def _named(node: ast.AST, docstrings: set[int]) -> list[str]:
    """The identifiers a node names in code: a string that is a name or a path of names (prose, with spaces, and
    docstrings are documentation), or an identifier."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [] if id(node) in docstrings or re.search(r"\s", node.value) else re.findall(r"\w+", node.value)
    names = {ast.Name: "id", ast.Attribute: "attr", ast.arg: "arg", ast.keyword: "arg", ast.FunctionDef: "name",
             ast.AsyncFunctionDef: "name", ast.ClassDef: "name"}
    attribute = names.get(type(node))
    value = getattr(node, attribute, None) if attribute else None
    return [value] if isinstance(value, str) else []


def test_importing_the_spec_imports_no_pipeline() -> None:
    """Every module of spec/ (the schema builder and the loader included), in a fresh interpreter."""
    spec_modules = sorted(f"tritonkit.spec.{p.stem}" for p in (PACKAGE / "spec").glob("*.py") if p.stem != "__init__")
    probe = (f"import json, sys, tritonkit.spec\nfor m in {spec_modules!r}: __import__(m)\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tritonkit.pipelines'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_no_core_module_names_a_pipeline_its_models_tensors_or_parameters() -> None:
    forbidden = _pipeline_names()
    found = []
    for path in _core():
        tree = ast.parse(path.read_text(), str(path))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            for word in _named(node, docstrings):
                if word in forbidden or set(word.lower().split("_")) & set(NAMED):
                    found.append(f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', '?')}: {word}")
    assert found == []


def test_no_import_circle_but_type_only_ones() -> None:
    """Module-level and in-function imports form no circle (TYPE_CHECKING imports may)."""
    assert circles() == PIPELINE_CIRCLES


def test_the_core_imports_inside_functions_only_with_a_reason() -> None:
    """An import inside a function of the core says why it waits (start-up time, or an optional extra)."""
    lines: dict[Path, list[str]] = {}
    unexplained = []
    for edge in edges():
        if edge.kind != "function" or edge.source.startswith("tritonkit.pipelines"):
            continue
        path = PACKAGE.parent / (edge.source.replace(".", "/") + ".py")
        path = path if path.is_file() else path.with_suffix("") / "__init__.py"
        text = lines.setdefault(path, path.read_text().splitlines())[edge.line - 1]
        if "#" not in text:
            unexplained.append(f"{path.relative_to(PACKAGE)}:{edge.line}: {text.strip()}")
    assert unexplained == []
