"""Small podman calls the stand-in image and the container tests share (builds that reach the package index).

A build's RUN steps see neither the host's pip configuration nor its CA bundle, and `podman build --env`
does not reach them; mounting a pip.conf that names the host's bundle lets an unchanged Dockerfile's
`pip install` reach the same index the host does, without copying anything into the image.
"""
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tritonkit.errors import TritonkitError

#: Environment variables that may name the CA bundle the host's pip trusts, in pip's own order.
_CA_VARIABLES = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


def podman() -> str:
    """The podman executable, or a one-line error with the install hint."""
    found = shutil.which("podman")
    if not found:
        raise TritonkitError("podman", "", "podman is not installed", "apt-get install podman runc")
    return found


def image_exists(tag: str) -> bool:
    return subprocess.run([podman(), "image", "exists", tag], capture_output=True).returncode == 0


def host_ca_bundle() -> Path | None:
    """The CA bundle the host's pip is told to trust, if any."""
    for name in _CA_VARIABLES:
        value = os.environ.get(name)
        if value and Path(value).is_file():
            return Path(value)
    return None


def build(context: Path, tag: str, *, containerfile: Path | None = None, base: str | None = None,
          log: Path | None = None) -> None:
    """`podman build` with host networking and the host's CA bundle for pip; `base` replaces the first FROM.

    Raises a one-line error naming the log (the build's output) when the build fails.
    """
    with tempfile.TemporaryDirectory(prefix="tritonkit-build-") as tmp:
        args: list[str] = [podman(), "build", "--network", "host", "-t", tag]
        ca = host_ca_bundle()
        if ca is not None:
            pip_conf = Path(tmp, "pip.conf")
            pip_conf.write_text("[global]\ncert = /etc/pip-ca.crt\n")
            args += ["-v", f"{ca}:/etc/pip-ca.crt:ro", "-v", f"{pip_conf}:/etc/pip.conf:ro"]
        if containerfile is not None:
            args += ["-f", str(containerfile)]
        if base is not None:
            args += ["--from", base]
        run_logged([*args, str(context)], log, what=f"podman build of {tag}")


def run_logged(args: Sequence[str], log: Path | None, what: str) -> None:
    """Runs a command with its output in `log` (or discarded), raising a one-line error that names the log."""
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
    with open(log or os.devnull, "w") as out:
        proc = subprocess.run(list(args), stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise TritonkitError(str(log) if log else args[0], "", f"{what} failed (exit code {proc.returncode})",
                             "read the log above the error for the failing step" if log else "rerun it by hand")
