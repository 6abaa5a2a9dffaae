"""The cluster recipe (docs/recipes.md, "From this machine to a cluster") works as written up to the kubectl steps.

Every line of the section's bash block before the first `kubectl`/`helm` line runs as written, in one shell, with
only the environment pointing boto3 (and so tritonkit) at a moto S3 server: `AWS_ENDPOINT_URL` and fake
credentials. The recipe's bucket does not exist beforehand: it goes from nothing. The `kubectl`/`helm` lines must be
the ones `tritonkit deploy` printed, for the recipe's namespace.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.docs.snippets import Reader, Snippet, environment, stop_servers
from tests.publish.conftest import s3  # noqa: F401  (the moto S3 server fixture)

PAGE = REPO_ROOT / "docs" / "recipes.md"
SECTION = "## From this machine to a cluster"
CLUSTER_TOOLS = ("kubectl", "helm")


def _cluster_block() -> tuple[list[str], list[str]]:
    """The block's lines before the first kubectl/helm line, and the kubectl/helm lines."""
    text = PAGE.read_text()
    assert SECTION in text, f"docs/recipes.md has no section {SECTION!r}"
    block = re.search(r"```bash\n(.*?)```", text[text.index(SECTION):], re.S)
    assert block, f"docs/recipes.md's {SECTION!r} has no bash block"
    lines = block[1].rstrip("\n").splitlines()
    first = next(i for i, line in enumerate(lines) if line.split(" ", 1)[0] in CLUSTER_TOOLS)
    return lines[:first], lines[first:]


@pytest.mark.server
@pytest.mark.slow
def test_cluster_recipe_runs_as_written(s3: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    local, cluster = _cluster_block()
    assert any("tritonkit deploy k8s" in line for line in local) and any(
        "tritonkit publish s3://" in line for line in local
    )
    buckets = set(re.findall(r"s3://([a-z0-9.-]+)/", "\n".join(local)))
    boto3 = pytest.importorskip("boto3")
    existing = {b["Name"] for b in boto3.client("s3", endpoint_url=s3["endpoint"]).list_buckets()["Buckets"]}
    assert buckets and not buckets & existing   # nothing made for the reader beforehand
    env = environment({"AWS_ENDPOINT_URL": s3["endpoint"]})
    reader = Reader(tmp_path, env)
    snippet = Snippet(PAGE, 0, "bash", "\n".join(local) + "\n", frozenset({"server"}))
    try:
        result = reader.run(snippet, timeout=600)
    finally:
        stop_servers(tmp_path, env)
    assert result.returncode == 0, (
        f"exit {result.returncode}\n--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-4000:]}"
    )
    assert (reader.cwd / "deploy" / "k8s" / "kustomization.yaml").is_file()
    for bucket in buckets:
        assert f"created the bucket s3://{bucket} (it did not exist)" in result.stderr
    assert "names no endpoint, so the pods read AWS S3" in result.stderr   # AWS_ENDPOINT_URL is not in the manifests
    assert "smoke result:" in result.stdout and result.stdout.count("smoke result:") == 2
    printed = result.stdout[result.stdout.index("next (NAMESPACE: yours):"):].splitlines()[1:]
    namespace = re.search(r"kubectl -n (\S+) ", cluster[0])
    assert namespace, cluster[0]
    expected = [line.strip().replace("NAMESPACE", namespace[1]) for line in printed if line.startswith("  ")]
    assert cluster == expected, (
        "the recipe's kubectl/helm lines are not what `tritonkit deploy k8s` prints:\n" + "\n".join(expected)
    )
