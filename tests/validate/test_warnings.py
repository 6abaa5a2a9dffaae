"""Where tritonkit is stricter than Triton 2.51 it warns: `warning:` lines on stderr from `tritonkit validate` and
`tritonkit build`, exit 0, and a `warnings` list in --json. Each warning has a close config that gives none."""
from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from tritonkit.cli.main import cli
from tritonkit.triton.config_parse import parse_model_config
from tritonkit.triton.model_config import pb
from tritonkit.validate.semantic import semantic_findings

from .repo_helpers import Model, outcome, python, tensor, write

IO = tensor("input", "IN", "[4]") + tensor("output", "OUT", "[4]")
DECOUPLED = "max_batch_size: 0\nmodel_transaction_policy { decoupled: true }\n"
ENSEMBLE_DECOUPLED = ("warning: {root}/ens/config.pbtxt: model_transaction_policy.decoupled: decoupled step 'gen' "
                      "makes the ensemble decoupled (Triton 2.51 sets this itself) but its config does not say so; "
                      "declare it: model_transaction_policy { decoupled: true }, so clients know to stream")


def streaming(declared: bool) -> dict[str, Model]:
    """An ensemble whose only step is decoupled, declared decoupled or not."""
    policy = "model_transaction_policy { decoupled: true }\n" if declared else ""
    step = ('step [{model_name: "gen" model_version: -1 input_map {key: "IN" value: "IN"} output_map {key: "OUT" '
            'value: "OUT"}}]')
    return {"gen": python(IO, DECOUPLED),
            "ens": (f'platform: "ensemble"\nmax_batch_size: 0\n{policy}{IO}ensemble_scheduling {{ {step} }}\n',
                    {"1/": ""})}


def invoke(args: list[str], cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, args, prog_name="tritonkit")
    finally:
        os.chdir(old)


def test_validate_prints_warning_and_passes(tmp_path: Path) -> None:
    write(tmp_path / "repo", streaming(declared=False))
    result = invoke(["validate", "repo"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [ENSEMBLE_DECOUPLED.replace("{root}", "repo")]
    assert result.stdout.startswith("repo: 2 models valid")
    report = json.loads(invoke(["validate", "repo", "--json"], tmp_path).stdout)
    assert report["ok"] is True
    assert [w["field"] for w in report["warnings"]] == ["model_transaction_policy.decoupled"]


def test_declared_decoupled_ensemble_has_no_warning(tmp_path: Path) -> None:
    write(tmp_path / "repo", streaming(declared=True))
    result = invoke(["validate", "repo", "--json"], tmp_path)
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["warnings"] == []


def test_ensemble_declared_decoupled_without_decoupled_step_warns(tmp_path: Path) -> None:
    models = streaming(declared=True)
    models["gen"] = python(IO, "max_batch_size: 0\n")
    assert outcome(tmp_path / "a", models) == ([], [
        "ens/config.pbtxt: model_transaction_policy.decoupled: the ensemble is declared decoupled but no decoupled "
        "step feeds it (Triton 2.51 loads it as not decoupled); remove decoupled: true"])


def test_leading_zero_version_folder_warns(tmp_path: Path) -> None:
    models = {"m": python(IO, files={"1/model.py": "", "02/model.py": ""})}
    assert outcome(tmp_path / "a", models) == ([], [
        "m/config.pbtxt: version_policy: Triton 2.51 ignores version folder '02' (leading zero); rename it to '2' if "
        "it is a version"])
    assert outcome(tmp_path / "b", {"m": python(IO, files={"1/model.py": "", "2/model.py": ""})}) == ([], [])


def bls_config(decoupled: bool) -> dict[str, pb.ModelConfig]:
    caller = (
        'backend: "python"\nmax_batch_size: 0\n' + IO + 'parameters {key: "bls_calls" value: {string_value: "gen"}}\n'
    )
    return {"caller": parse_model_config(caller + (DECOUPLED.split("\n")[1] if decoupled else ""), "caller"),
            "gen": parse_model_config('backend: "python"\n' + DECOUPLED + IO, "gen")}


def test_bls_call_of_decoupled_model_warns() -> None:
    """Triton lets a non-decoupled Python model call a decoupled one (exec(decoupled=True) and collect the
    responses)."""
    found = semantic_findings(bls_config(decoupled=False))
    assert [(f.severity, f.field, f.problem) for f in found] == [
        ("warning", "bls.calls[0]", "decoupled model 'gen' streams responses but 'caller' is not decoupled "
                                    "(Triton lets it call with exec(decoupled=True) and collect them)")]
    assert semantic_findings(bls_config(decoupled=True)) == []


SPEC = """version: 1
models:
  gen:
    backend: python
    max_batch_size: 0
    model_transaction_policy: {decoupled: true}
    input: [{name: IN, data_type: TYPE_FP32, dims: [4]}]
    output: [{name: OUT, data_type: TYPE_FP32, dims: [4]}]
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: gen.py}
  ens:
    platform: ensemble
    max_batch_size: 0
    input: [{name: IN, data_type: TYPE_FP32, dims: [4]}]
    output: [{name: OUT, data_type: TYPE_FP32, dims: [4]}]
    ensemble_scheduling:
      step: [{model_name: gen, input_map: {IN: IN}, output_map: {OUT: OUT}}]
"""


def test_build_prints_warning_and_writes(tmp_path: Path) -> None:
    (tmp_path / "tritonkit.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "gen.py").write_text("", encoding="utf-8")
    result = invoke(["build", "--json"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert [line.split(": ")[0:3] for line in result.stderr.splitlines()] == [
        ["warning", "tritonkit.yaml", "models.ens.model_transaction_policy.decoupled"]
    ]
    assert [w["field"] for w in json.loads(result.stdout)["warnings"]] == [
        "models.ens.model_transaction_policy.decoupled"
    ]
    assert (tmp_path / "model_repository" / "ens" / "config.pbtxt").is_file()


def test_bls_callee_pending_export_is_taken_on_trust() -> None:
    """A dry run skips exports: a BLS callee that is exported later is not reported missing (as for ensemble steps)."""
    caller = {"caller": bls_config(decoupled=True)["caller"]}
    assert [f.problem for f in semantic_findings(caller)] == ["model 'gen' does not exist"]
    assert semantic_findings(caller, frozenset({"gen"})) == []


def test_backend_no_image_ships_warns_with_the_close_name(tmp_path: Path) -> None:
    """`backend: pyhton` passes Triton's config checks but fails to load wherever no such custom backend is
    installed."""
    typo = {"m": (f'backend: "pyhton"\nmax_batch_size: 8\n{IO}', {"1/model.py": ""})}
    assert outcome(tmp_path / "a", typo) == ([], [
        "m/config.pbtxt: backend: no Triton image ships a backend 'pyhton', so Triton loads it only where a custom "
        "backend of that name is installed; did you mean 'python'? (a custom backend goes in the server's backends "
        "folder)"])
    custom = {"m": (f'backend: "acme"\nmax_batch_size: 8\n{IO}', {"1/model.py": ""})}
    assert outcome(tmp_path / "b", custom)[1][0].startswith("m/config.pbtxt: backend: no Triton image ships a backend "
                                                            "'acme'")
    assert outcome(tmp_path / "c", {"m": python(IO)}) == ([], [])
