"""What the help and a starter say is what happens: the typical flow, the gateway's default port, the LLM starter's
noise, the docs' own entry point."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT, run_cli
from tritonkit.spec.gateway import GatewaySpec

#: The flow `tritonkit --help` shows, the one README's shows too.
FLOW = ["init", "build", "serve", "smoke", "tune", "publish", "deploy"]


def test_the_typical_flow_goes_from_init_to_deploy() -> None:
    helped = run_cli("--help")
    assert helped.returncode == 0, helped.stderr
    flow = helped.stdout[helped.stdout.index("Typical flow:"):helped.stdout.index("Options:")]
    assert re.findall(r"^\s+tritonkit (\w+)", flow, re.M) == FLOW


def test_serve_help_gives_the_gateway_port_the_gateway_uses() -> None:
    helped = run_cli("serve", "--help")
    option = " ".join(helped.stdout[helped.stdout.index("--gateway-port"):].split("--json")[0].split())
    assert f"./tritonkit.yaml, {GatewaySpec().port}]" in option and GatewaySpec().port == 9100


def test_the_llm_starter_says_its_random_weights_answer_with_noise(tmp_path: Path) -> None:
    said = run_cli("init", str(tmp_path / "text"), "--pipeline", "llm")
    assert said.returncode == 0, said.stderr
    [note] = [line for line in said.stdout.splitlines() if line.startswith("note: ")]
    assert "random weights" in note and "mojibake are expected" in note
    assert "mojibake are expected" in (tmp_path / "text" / "tritonkit.yaml").read_text()
    summary = json.loads(run_cli("init", str(tmp_path / "json"), "--pipeline", "llm", "--json").stdout)
    assert summary["note"] == note.removeprefix("note: ")
    assert json.loads(run_cli("init", str(tmp_path / "plain"), "--json").stdout)["note"] is None


def test_make_docs_serves_the_site_without_the_end_of_life_banner() -> None:
    recipe = subprocess.run(["make", "-n", "docs", "VENV=/nonexistent/.venv"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert recipe.returncode == 0, recipe.stderr
    assert "NO_MKDOCS_2_WARNING=1 /nonexistent/.venv/bin/mkdocs serve" in recipe.stdout.splitlines()
