"""An engine that fails before any container exists (an image it cannot pull) is named by its own error: the engine
stands in here as podman-compose 1.0 behaves, printing podman's error and exiting 0 with nothing created, so the
line must come from its output, not from a container log that does not exist."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

IMAGE = "registry.invalid/tritonkit/no-such-image:1"
PULL_ERROR = (f"Error: initializing source docker://{IMAGE}: pinging container registry registry.invalid: Get "
              '"https://registry.invalid/v2/": dial tcp: lookup registry.invalid: no such host')
#: podman-compose 1.0 on an image it cannot pull: the podman command, podman's error, its exit code, and exit 0.
COMPOSE = f"""#!/bin/sh
case " $* " in
  *" up "*) echo "podman run --name=x_triton_1 -d {IMAGE}"; echo '{PULL_ERROR}' >&2; echo "exit code: 125";;
esac
exit 0
"""
PODMAN = "#!/bin/sh\nexit 0\n"   # answers `info`; lists no container, network, volume or pod of the project


def test_no_container_created_prints_the_engine_s_error(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, script in (("podman-compose", COMPOSE), ("podman", PODMAN)):
        (tools / name).write_text(script)
        (tools / name).chmod(0o755)
    project = tmp_path / "project"
    (project / "model_repository").mkdir(parents=True)
    (project / "docker-compose.yml").write_text(yaml.safe_dump({"services": {"triton": {
        "image": IMAGE, "volumes": ["./model_repository:/models:ro"]}}}))
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    up = subprocess.run([sys.executable, "-m", "tritonkit", "up", "--engine", "podman-compose", "--timeout", "5"],
                        cwd=project, capture_output=True, text=True, timeout=120, env=env)
    assert up.returncode == 2 and "Traceback" not in up.stderr, up.stderr
    assert up.stderr.splitlines()[-1] == (
        f"docker-compose.yml: the engine created no container of the project; podman-compose said: {PULL_ERROR}; "
        "fix what podman-compose says and run tritonkit up again (an image it cannot pull: make its registry "
        "reachable, or pull or build the image first)")
    assert "container log named above" not in up.stderr
