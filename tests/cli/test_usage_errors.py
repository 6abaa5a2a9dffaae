"""Command-line mistakes (unknown command or option, bad value, missing argument) get the house form too:
exit 2, one `tritonkit CMD: --option: problem; fix` line, no usage block, and JSON on stdout with --json.

They are caught by click before any command runs, so they are checked through the real CLI here rather
than per command module.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_contract import assert_one_line_errors, run_in_process, run_subprocess

CASES = [
    # args, the whole first stderr line
    (["buidl"], "tritonkit: COMMAND: no such command 'buidl'; did you mean 'build'? (see 'tritonkit --help')"),
    (["--bogus"], "tritonkit: --bogus: no such option '--bogus'; see 'tritonkit --help'"),
    (["build", "--jsn"],
     "tritonkit build: --jsn: no such option '--jsn'; did you mean --json? (see 'tritonkit build --help')"),
    (["build", "extra"],
     "tritonkit build: arguments: got unexpected extra argument (extra); see 'tritonkit build --help'"),
    (["init", "x", "--pipeline", "foo"],
     "tritonkit init: --pipeline: 'foo' is not one of 'asr', 'bls', 'classifier', 'embed', 'image', 'llm', 'tts'; "
     "see 'tritonkit init --help'"),
    (["serve", "--http-port", "abc"],
     "tritonkit serve: --http-port: 'abc' is not a valid integer; see 'tritonkit serve --help'"),
    (["perf"], "tritonkit perf: MODEL: missing argument 'MODEL'; see 'tritonkit perf --help'"),
    (["rollback", "m"], "tritonkit rollback: --to: missing option '--to'; see 'tritonkit rollback --help'"),
    (["deploy", "k9s"],
     "tritonkit deploy: COMMAND: no such command 'k9s'; did you mean 'k8s'? (see 'tritonkit deploy --help')"),
    (["serve", "--onnx-threads", "-2"],
     "tritonkit serve: --onnx-threads: -2 is not in the range x>=1; see 'tritonkit serve --help'"),
    (["serve", "s3://models/prod", "--onnx-threads", "2"],
     "tritonkit serve: --onnx-threads: sets the ONNX fallback of a local "
     "repository, a published one runs its models as published (their intra_op_thread_count); see 'tritonkit serve "
     "--help'"),
    # a folder option given an s3:// URL: named as given (pathlib made it 's3:/models/prod: is not a directory')
    (["validate", "s3://models/prod"],
     "tritonkit validate: DIRECTORY: 's3://models/prod' is an s3:// URL, not a local folder: "
     "pass the built folder it was published from; see 'tritonkit validate --help'"),
    (["smoke", "-r", "s3://127.0.0.1:9000/models/prod"],
     "tritonkit smoke: --repository: 's3://127.0.0.1:9000/models/prod' is an "
     "s3:// URL, not a local folder: pass the built folder it was published from; see 'tritonkit smoke --help'"),
]


@pytest.mark.parametrize(("args", "line"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_usage_error_is_one_line(args: list[str], line: str, tmp_path: Path) -> None:
    outcome = run_in_process(args, tmp_path)
    assert assert_one_line_errors(outcome, line) == [line]
    assert outcome.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "line"), [CASES[2], CASES[4], CASES[6]],
                         ids=["unknown-option", "bad-choice", "missing-argument"])
def test_usage_error_with_json_parses(args: list[str], line: str, tmp_path: Path) -> None:
    outcome = run_in_process([*args, "--json"], tmp_path)
    assert_one_line_errors(outcome, line)
    file, field, rest = line.split(": ", 2)
    problem, fix = rest.split("; ")
    assert json.loads(outcome.stdout) == {"ok": False,
                                          "errors": [{"file": file, "field": field, "problem": problem, "fix": fix}]}


def test_json_after_double_dash_is_not_ours(tmp_path: Path) -> None:
    """`perf M -- --json` passes --json to perf_analyzer; a usage error before it stays plain text."""
    outcome = run_in_process(["perf", "-b", "two", "m", "--", "--json"], tmp_path)
    assert_one_line_errors(outcome, "tritonkit perf: --batch-size: 'two' is not a valid integer")
    assert outcome.stdout == ""


@pytest.mark.parametrize(("args", "line"), [
    (["perf", "m", "--concurrency", "x"],
     "tritonkit perf: --concurrency: 'x' is not a concurrency range; use START[:END[:STEP]], e.g. 1:8:1 or 4"),
    (["serve", "--http-port", "8500", "--grpc-port", "8500", "--json"],
     "tritonkit serve: --http-port/--grpc-port/--metrics-port: the endpoints need distinct ports"),
], ids=["perf-concurrency", "serve-same-port"])
def test_option_problem_names_the_command(args: list[str], line: str, tmp_path: Path) -> None:
    """A command's own check of an option (a Problem without a file) is named after the command, not ': --opt'."""
    (tmp_path / "model_repository").mkdir()
    outcome = run_in_process(args, tmp_path)
    assert_one_line_errors(outcome, line)
    if "--json" in args:
        assert json.loads(outcome.stdout)["errors"][0]["file"] == "tritonkit serve"


@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_perf_with_no_server_names_the_url(protocol: str, tmp_path: Path) -> None:
    """Real perf_analyzer against a free port nobody listens on: one line naming the URL and how to start a server
    (was perf_analyzer's own text, with a second '; ' inside it)."""
    from tritonkit.serve.ports import choose_ports

    url = f"127.0.0.1:{choose_ports('127.0.0.1', {})['http']}"
    line = (f"tritonkit perf: --url: no server at {url} ({protocol}); "
            "start one with `tritonkit serve --background`, or point --url at a running server")
    assert assert_one_line_errors(run_in_process(["perf", "m", "-u", url, "-i", protocol], tmp_path), line) == [line]


def test_perf_analyzer_usage_block_gives_its_own_complaint(tmp_path: Path) -> None:
    """An option perf_analyzer refuses makes it print a 370-line usage block; the line is its complaint, not the
    block's last line ("... while modelB's version is unspecified")."""
    line = ("perf_analyzer: model 'm': unrecognized option '--bogus'; check the arguments after -- (perf_analyzer "
            "--help lists them)")
    assert assert_one_line_errors(run_in_process(["perf", "m", "--", "--bogus"], tmp_path), line) == [line]


def test_bare_group_still_shows_its_help(tmp_path: Path) -> None:
    outcome = run_in_process(["deploy"], tmp_path)
    assert "Usage: tritonkit deploy" in outcome.stdout + outcome.stderr and "k8s" in outcome.stdout + outcome.stderr


def test_process_level(tmp_path: Path) -> None:
    """As a user runs it: `python -m tritonkit` with a typo'd option."""
    assert_one_line_errors(run_subprocess(["validate", "--jsno"], tmp_path),
                           "tritonkit validate: --jsno: no such option")
