"""Fuzzed specs: `tritonkit build` on mutated real specs never shows a traceback and never half-writes.

The seeds are the example project (tritonkit.yaml at the repository root) and every starter's spec. A
mutation deletes keys, swaps types, writes out-of-range numbers, unicode and very long names, YAML alias
bombs, deep nesting, and include graphs with cycles. Whatever comes out, the build either succeeds (and
the written repository validates) or exits 2 with exactly one `file: field: problem; fix` line per
problem, leaving the project folder byte for byte as it was.

The real CLI runs in-process (click's runner): about 0.1 s a build, where a subprocess costs 1 s.
Seeds whose build exports a model (the example's `mlp`, llm, asr) run `--dry-run`, which checks the same
spec rules without exporting; the classifier and BLS starters also run full builds.
"""
from __future__ import annotations

import copy
import json
import math
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, example, given
from hypothesis import strategies as st

from tests.cli.cli_contract import ERROR_LINE, Outcome, run_in_process, snapshot
from tests.conftest import REPO_ROOT
from tritonkit.errors import Problem

from .budget import fuzz_settings

#: seeds whose full build runs no export (so the fuzz can afford it); the others run --dry-run only
FULL_BUILD_SEEDS = ("classifier", "bls")
SEEDS = ("example", "classifier", "bls", "llm", "asr")
#: a line longer than this, past the names it quotes, is a dump and not a message (an alias bomb's value once
#: came out as megabytes); a name the spec spells out may be quoted a few times in full
MAX_LINE = 4096


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One clean copy of each seed project: the example, and each starter as `tritonkit init` writes it."""
    root = tmp_path_factory.mktemp("seeds")
    example_dir = root / "example"
    (example_dir / "ensembles").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "tritonkit.yaml", example_dir)
    shutil.copy(REPO_ROOT / "ensembles" / "classify.yaml", example_dir / "ensembles")
    shutil.copytree(REPO_ROOT / "models", example_dir / "models", ignore=shutil.ignore_patterns("__pycache__"))
    out = {"example": example_dir}
    for starter in SEEDS[1:]:
        outcome = run_in_process(["init", str(root / starter), "--pipeline", starter], root)
        assert outcome.exit_code == 0, outcome.stderr
        out[starter] = root / starter
    return out


# -- values a mutation writes ------------------------------------------------------------------------
LONG_NAMES = st.sampled_from(["x" * 255, "y" * 256, "名" * 100, "😀" * 70, "a/" * 130, "." * 300, "é" * 5000])
WEIRD_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(["\n", "\r", "\t", "\x00", "\x1b", "\u2028", "\u0085", "\ufeff", ":", ";", "/", ".", " ", "'",
                         '"', "&", "*", "!", "%", "{", "}"]),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    max_size=20,
)
NAMES = st.one_of(LONG_NAMES, WEIRD_TEXT, st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True))
NUMBERS = st.one_of(
    st.sampled_from([-1, 0, 1, -(2**31), 2**31, 2**32, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**30), 1e308, -1e308,
                     math.nan, math.inf, -math.inf, 0.5, -0.0]),
    st.integers(-(2**70), 2**70),
    st.floats(),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, NAMES)
VALUES = st.recursive(SCALARS,
                      lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(NAMES, inner, max_size=3)),
                      max_leaves=6)


def nodes(tree: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into the parsed spec (dict keys and list indices), the root first."""
    yield path
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from nodes(value, path + (key,))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from nodes(value, path + (index,))


def name_paths(tree: Any) -> list[tuple[Any, ...]]:
    """Paths whose value is a name or a path: model names (keys), tensor/step names and `files:` sources."""
    found = []
    for path in nodes(tree):
        if len(path) >= 2 and path[-2] == "models":
            found.append(path)  # renaming the key renames the model
        elif (
            path
            and path[-1] in ("name", "model_name", "input_name", "output_name")
            or (len(path) >= 2 and path[-2] in ("files", "input_map", "output_map"))
        ):
            found.append(path)
    return found


def get(tree: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        tree = tree[part]
    return tree


def swapped(value: Any, draw: st.DrawFn) -> Any:
    """The same content in another type: str <-> int <-> list <-> dict <-> null."""
    kind = draw(st.sampled_from(["str", "int", "list", "dict", "null", "unwrap"]))
    if kind == "str":
        return str(value)
    if kind == "int":
        return len(value) if isinstance(value, (str, list, dict)) else draw(NUMBERS)
    if kind == "list":
        return [value]
    if kind == "dict":
        return {"value": value}
    if kind == "unwrap" and isinstance(value, (list, dict)) and value:
        return next(iter(value.values())) if isinstance(value, dict) else value[0]
    return None


@st.composite
def mutated(draw: st.DrawFn, spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` with one to three mutations, each at a path drawn from the tree as it is by then."""
    tree = copy.deepcopy(spec)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["delete", "replace", "swap", "rename", "name", "number"]))
        if op == "name":
            targets = name_paths(tree)
        elif op == "number":  # numbers anywhere: batch sizes, dims, delays, smoke values
            targets = [
                p
                for p in nodes(tree)
                if p and isinstance(get(tree, p), (int, float)) and not isinstance(get(tree, p), bool)
            ]
        else:
            targets = [p for p in nodes(tree) if p]
        if not targets:
            continue
        path = draw(st.sampled_from(targets))
        parent, key = get(tree, path[:-1]), path[-1]
        if op == "delete":
            del parent[key]
        elif op == "replace":
            parent[key] = draw(VALUES)
        elif op == "number":
            parent[key] = draw(NUMBERS)
        elif op == "swap":
            parent[key] = swapped(parent[key], draw)
        elif isinstance(parent, dict) and (op == "rename" or path[-2:-1] == ("models",)):
            new = draw(NAMES)
            items = list(parent.items())
            parent.clear()
            parent.update({(new if k == key else k): v for k, v in items})
        else:
            parent[key] = draw(NAMES)
    return tree


# -- the property ------------------------------------------------------------------------------------
def longest_text(tree: Any) -> int:
    """The longest key or string in the parsed spec: a message may quote it whole."""
    texts = [p[-1] for p in nodes(tree) if p and isinstance(p[-1], str)] + [get(tree, p) for p in nodes(tree)]
    return max((len(t) for t in texts if isinstance(t, str)), default=0)


def check_outcome(outcome: Outcome, project: Path, before: dict[str, bytes | None], full: bool,
                  quoted: int = 0) -> None:
    """Exit 0 with a valid repository, or exit 2 with one line per problem and nothing written."""
    text = outcome.stdout + outcome.stderr
    assert "Traceback" not in text, outcome.stderr
    assert outcome.exit_code in (0, 2), (outcome.exit_code, outcome.stderr)
    report = json.loads(outcome.stdout)
    if outcome.exit_code == 2:
        assert report["ok"] is False
        problems = [Problem(**p) for p in report["errors"]]
        lines = outcome.stderr.splitlines()
        assert lines == [p.line() for p in problems], "stderr is not one line per problem"
        for problem, line in zip(problems, lines):
            assert line.isprintable() and len(line) <= MAX_LINE + 3 * quoted, (
                f"not a printable one-line message: {line[:300]!r}"
            )
            if not set(":;") & set(
                problem.file + problem.field + problem.problem + problem.fix
            ):  # fuzzed names may hold both
                assert ERROR_LINE.match(line), f"not `file: field: problem; fix`: {line!r}"
        assert snapshot(project) == before, "a failed build changed the project folder"
        return
    assert report["ok"] is True
    if not full:
        assert snapshot(project) == before, "a dry run changed the project folder"
        return
    validated = run_in_process(["validate", "model_repository", "--json"], project)
    assert validated.exit_code == 0, validated.stdout + validated.stderr


def build_text(seed_dir: Path, spec_text: str, full: bool, extra: dict[str, str] | None = None,
               quoted: int = 0) -> Outcome:
    """Copies the seed, writes the spec (and `extra` files), builds it and checks the outcome."""
    with tempfile.TemporaryDirectory(prefix="tk-fuzz-") as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(seed_dir, project)
        for rel, text in {"tritonkit.yaml": spec_text, **(extra or {})}.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text, encoding="utf-8")
        before = snapshot(project)
        args = ["build", "--json"] + ([] if full else ["--dry-run"])
        outcome = run_in_process(args, project)
        check_outcome(outcome, project, before, full, quoted)
        return outcome


def dump(tree: Any) -> str:
    return yaml.safe_dump(tree, sort_keys=False, allow_unicode=True)


# -- the tests ---------------------------------------------------------------------------------------
@pytest.mark.slow  # hypothesis examples through the real loader and build: minutes in all
@fuzz_settings(600)
@given(seed=st.sampled_from(SEEDS), data=st.data(), full=st.booleans())
def test_mutated_specs_build_or_fail_cleanly(seeds: dict[str, Path], seed: str, data: st.DataObject,
                                             full: bool) -> None:
    spec = yaml.safe_load((seeds[seed] / "tritonkit.yaml").read_text(encoding="utf-8"))
    tree = data.draw(mutated(spec), label="spec")
    full = full and seed in FULL_BUILD_SEEDS
    outcome = build_text(seeds[seed], dump(tree), full, quoted=longest_text(tree))
    event(f"exit {outcome.exit_code}" + ("" if full else " (dry run)"))


def bomb(levels: int, width: int) -> str:
    """A flow-style list whose last item refers `width` times to the one before, `levels` deep (billion laughs)."""
    items = ["&l0 [" + ", ".join(['"lol"'] * width) + "]"]
    items += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels + 1)]
    return "[" + ", ".join(items) + "]"


#: where an alias bomb or a deep nest goes: fields the schema reads (unknown keys are refused before)
PLACES = {
    "description": "version: 1\ndescription: {value}\nmodels: {{m: {{backend: python, max_batch_size: 0}}}}\n",
    "parameters": "version: 1\nmodels:\n  m: {{backend: python, max_batch_size: 0, parameters: {{p: {value}}}}}\n",
    "input": "version: 1\nmodels:\n  m: {{backend: python, max_batch_size: 0, input: {value}}}\n",
    "smoke": "version: 1\nmodels:\n  m: {{backend: python, max_batch_size: 0, smoke: [{{inputs: {{X: {value}}}}}]}}\n",
    "include": "version: 1\ninclude: {value}\nmodels: {{m: {{backend: python, max_batch_size: 0}}}}\n",
}


@pytest.mark.slow  # hypothesis examples through the real loader: seconds
@fuzz_settings(30)
@given(levels=st.integers(1, 12), width=st.integers(2, 10), place=st.sampled_from(sorted(PLACES)))
@example(levels=9, width=9, place="description")
@example(levels=9, width=9, place="smoke")
@example(levels=5, width=9, place="input")   # under the alias limit: the bad value was quoted whole (megabytes)
def test_alias_bombs_are_refused_quickly(seeds: dict[str, Path], levels: int, width: int, place: str) -> None:
    build_text(seeds["classifier"], PLACES[place].format(value=bomb(levels, width)), full=False)


@pytest.mark.slow  # hypothesis examples through the real loader and build: minutes in all
@fuzz_settings(30)
@given(depth=st.integers(1, 3000), kind=st.sampled_from(["[", "{a: "]), place=st.sampled_from(sorted(PLACES)))
@example(depth=5000, kind="[", place="description")
@example(depth=900, kind="[", place="parameters")
def test_deeply_nested_values_are_refused(seeds: dict[str, Path], depth: int, kind: str, place: str) -> None:
    value = kind * depth + "1" + ("]" if kind == "[" else "}") * depth
    build_text(seeds["classifier"], PLACES[place].format(value=value), full=False)


PYTHON_MODEL_SPEC = {"backend": "python", "max_batch_size": 0,
                     "input": [{"name": "X", "data_type": "TYPE_FP32", "dims": [1]}],
                     "output": [{"name": "Y", "data_type": "TYPE_FP32", "dims": [1]}],
                     "files": {"model.py": "../models/classifier.py"}}


@pytest.mark.slow  # hypothesis examples through the real loader and build: minutes in all
@fuzz_settings(100)
@given(count=st.integers(1, 8), data=st.data())
def test_include_graphs_with_cycles_and_diamonds(seeds: dict[str, Path], count: int, data: st.DataObject) -> None:
    """Random include graphs over `count` pipeline files (each defining one model): a tree builds, anything
    that reaches a file twice (a cycle, or a diamond that defines its model twice) exits 2."""
    edges = data.draw(st.lists(st.lists(st.integers(0, count - 1), max_size=3), min_size=count, max_size=count),
                      label="edges")
    top_includes = data.draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=3), label="top")
    files = {f"inc/p{i}.yaml": dump({"include": [f"p{j}.yaml" for j in edges[i]],
                                     "models": {f"m{i}": PYTHON_MODEL_SPEC}}) for i in range(count)}
    spec = yaml.safe_load((seeds["classifier"] / "tritonkit.yaml").read_text(encoding="utf-8"))
    spec["include"] = [f"inc/p{i}.yaml" for i in top_includes]
    full = data.draw(st.booleans(), label="full")
    with tempfile.TemporaryDirectory(prefix="tk-fuzz-") as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(seeds["classifier"], project)
        for rel, text in {"tritonkit.yaml": dump(spec), **files}.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text, encoding="utf-8")
        before = snapshot(project)
        outcome = run_in_process(["build", "--json"] + ([] if full else ["--dry-run"]), project)
        check_outcome(outcome, project, before, full)
        visits: list[int] = []
        walk_includes(top_includes, edges, visits, [], cycles := [])
        assert (outcome.exit_code == 0) == (len(visits) == len(set(visits)) and not cycles), (
            edges,
            top_includes,
            outcome.stderr,
        )
        if cycles:
            assert "closes an include cycle" in outcome.stderr


def walk_includes(includes: list[int], edges: list[list[int]], visits: list[int], chain: list[int],
                  cycles: list[int]) -> None:
    """The loader's walk: depth first, a file already on the chain is a cycle and is not entered."""
    for target in includes:
        if target in chain:
            cycles.append(target)
            continue
        visits.append(target)
        walk_includes(edges[target], edges, visits, chain + [target], cycles)


@pytest.mark.slow  # hypothesis examples through the real loader and build: minutes in all
def test_a_very_deep_include_chain(seeds: dict[str, Path]) -> None:
    """A chain of 1500 includes (past Python's recursion limit if the walk recursed per file unguarded)."""
    depth = 1500
    files = {f"inc/p{i}.yaml": dump({"include": [f"p{i + 1}.yaml"] if i + 1 < depth else []}) for i in range(depth)}
    spec = yaml.safe_load((seeds["classifier"] / "tritonkit.yaml").read_text(encoding="utf-8"))
    spec["include"] = ["inc/p0.yaml"]
    outcome = build_text(seeds["classifier"], dump(spec), full=False, extra=files)
    assert outcome.exit_code == 2 and "includes nest more than 64 files deep" in outcome.stderr, outcome.stderr


# -- crashes the fuzz found, kept as plain regression tests ------------------------------------------
def classifier_spec(seeds: dict[str, Path]) -> dict[str, Any]:
    return yaml.safe_load((seeds["classifier"] / "tritonkit.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["pre\nprocess", "pre\u2028process", "pre\x1bprocess"])
def test_a_line_break_in_a_name_stays_on_its_one_line(seeds: dict[str, Path], name: str) -> None:
    """Was: the name went out raw, so one problem printed as two lines (Python splits lines at \\u2028 too)."""
    spec = classifier_spec(seeds)
    spec["models"][name] = spec["models"].pop("preprocess")
    outcome = build_text(seeds["classifier"], dump(spec), full=False)
    assert outcome.exit_code == 2 and len(outcome.stderr.splitlines()) == 1
    assert ascii(name)[1:-1] in outcome.stderr, outcome.stderr


def test_a_long_include_name(seeds: dict[str, Path]) -> None:
    """Was: OSError (File name too long) from the include walk."""
    spec = classifier_spec(seeds)
    spec["include"] = ["y" * 300 + ".yaml"]
    outcome = build_text(seeds["classifier"], dump(spec), full=False)
    assert outcome.exit_code == 2 and "include[0]: cannot read 'yyy" in outcome.stderr


def test_a_file_name_too_long_for_the_file_system(seeds: dict[str, Path]) -> None:
    """Was: OSError (File name too long) from the copy planner, as a traceback with exit 1."""
    spec = classifier_spec(seeds)
    spec["models"]["classifier"]["files"] = {"model.py": "models/" + "y" * 300 + ".py"}
    outcome = build_text(seeds["classifier"], dump(spec), full=True)
    assert outcome.exit_code == 2 and "models.classifier.files.model.py: cannot read 'models/yyy" in outcome.stderr


def test_an_out_of_range_number_is_one_problem(seeds: dict[str, Path]) -> None:
    """Was: a second line blaming the ensemble for calling a model that 'does not exist' (its config had failed)."""
    spec = classifier_spec(seeds)
    spec["models"]["classifier"]["max_batch_size"] = 10**30
    outcome = build_text(seeds["classifier"], dump(spec), full=True)
    assert (
        outcome.exit_code == 2
        and len(outcome.stderr.splitlines()) == 1
        and "models.classifier.max_batch_size" in outcome.stderr
    )


@pytest.mark.parametrize("value", [2**70, 2**40, -(2**63), 1e308])
def test_smoke_values_out_of_the_type_range(seeds: dict[str, Path], value: float) -> None:
    """Was: OverflowError traceback (2**70, 1e308 as INT32), or a golden silently wrapped (2**40 -> 0) or inf."""
    spec = yaml.safe_load((seeds["example"] / "tritonkit.yaml").read_text(encoding="utf-8"))
    spec["models"]["accumulator"]["smoke"][0]["sequence"][0]["inputs"]["VALUE"] = [[value]]
    outcome = build_text(seeds["example"], dump(spec), full=False)
    assert outcome.exit_code == 2 and "a value is out of range for TYPE_INT32" in outcome.stderr


def test_an_fp32_smoke_value_that_would_become_inf(seeds: dict[str, Path]) -> None:
    spec = classifier_spec(seeds)
    spec["models"]["preprocess"]["smoke"][0]["outputs"]["FEATURES"] = [[1e308, 0, 0, 0]]
    outcome = build_text(seeds["classifier"], dump(spec), full=True)
    assert outcome.exit_code == 2 and "a value is out of range for TYPE_FP32" in outcome.stderr
