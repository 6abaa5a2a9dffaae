"""A stand-in for the official Triton image, built from registries only: a Debian mirror and the package index.

For machines without access to nvcr.io (this project's CI): a debootstrapped Debian root filesystem imported as a base
image, Python 3.11, and Triton 2.51 from the `nvidia-pytriton` wheel laid out the way the official image is
(`tritonserver` on PATH, backends in /opt/tritonserver/backends, the Python backend stub in place, curl for the compose
healthcheck, `pip` for a generated Dockerfile, user `triton-server` with uid 1000). It has the Python backend only, plus
onnxruntime for the fallback models `tritonkit serve` generates. The image is tagged by a hash of this recipe, so each
machine builds it once; the root filesystem is cached as a tarball under the tritonkit cache.

    python -m tritonkit.containers.standin          # prints the image tag, building it if needed
"""
import fcntl
import hashlib
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tritonkit import TRITON_VERSION
from tritonkit.containers.podman import build, image_exists, podman, run_logged
from tritonkit.errors import TritonkitError
from tritonkit.serve.runtime import PYTRITON_VERSION, cache_root

SUITE = "bookworm"
_SITE = "/usr/local/lib/python3.11/dist-packages"
#: Built on top of the imported root filesystem (`{base}`); every line is part of the recipe hash.
CONTAINERFILE = f"""\
FROM {{base}}
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip libpython3.11 curl \\
    ca-certificates && rm -rf /var/lib/apt/lists/* /usr/lib/python3.11/EXTERNALLY-MANAGED
RUN pip install --no-cache-dir nvidia-pytriton=={PYTRITON_VERSION} 'numpy<2' onnxruntime
RUN T={_SITE}/pytriton/tritonserver \\
    && cp $T/python_backend_stubs/3.11/triton_python_backend_stub $T/backends/python/ \\
    && mkdir -p /opt/tritonserver && ln -s $T/bin $T/backends $T/caches /opt/tritonserver/ \\
    && useradd -u 1000 -m triton-server
ENV PATH=/opt/tritonserver/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    LD_LIBRARY_PATH={_SITE}/nvidia_pytriton.libs
WORKDIR /opt/tritonserver
"""
_DEBOOTSTRAP = ["debootstrap", "--variant=minbase", SUITE]
_DEFAULT_MIRROR = "http://deb.debian.org/debian"


def recipe_hash() -> str:
    """Hash of everything that decides the image's content (not where it is downloaded from)."""
    return hashlib.sha256(repr((_DEBOOTSTRAP, CONTAINERFILE)).encode()).hexdigest()[:12]


def debian_mirror() -> str:
    """The Debian mirror apt is configured with here (deb822 or one-line sources), else deb.debian.org."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        try:
            text = path.read_text()
        except OSError:
            continue
        found = re.search(r"^(?:URIs:\s*|deb\s+(?:\[[^]]*\]\s+)?)(\S+/debian)/?\s", text, re.MULTILINE)
        if found:
            return found.group(1)
    return _DEFAULT_MIRROR


def _rootfs_tarball(work: Path, log: Path) -> Path:
    """The cached minimal Debian root filesystem as a tarball, debootstrapped when absent."""
    tarball = work / f"debian-{SUITE}-minbase-{recipe_hash()}.tar"
    if tarball.is_file():
        return tarball
    with tempfile.TemporaryDirectory(prefix="rootfs-", dir=work) as tmp:
        rootfs = Path(tmp, "rootfs")
        run_logged([*_DEBOOTSTRAP, str(rootfs), debian_mirror()], log, what="debootstrap")
        partial = Path(tmp, "rootfs.tar")
        run_logged(["tar", "-C", str(rootfs), "-cf", str(partial), "."], log.with_suffix(".tar.log"), what="tar")
        partial.replace(tarball)
    return tarball


def ensure_image(progress: Callable[[str], None] = lambda _: None) -> str:
    """The stand-in image's tag, building it first when podman does not have it (once per machine)."""
    tag = f"localhost/tritonkit-standin:{TRITON_VERSION}-{recipe_hash()}"
    if image_exists(tag):
        return tag
    work = cache_root() / "standin"
    work.mkdir(parents=True, exist_ok=True)
    with open(work / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits for the first build instead of repeating it
        if image_exists(tag):
            return tag
        started = time.monotonic()
        logs = work / "logs"
        progress(f"building the stand-in Triton image {tag} (once per machine; logs in {logs})")
        tarball = _rootfs_tarball(work, logs / "debootstrap.log")
        base = f"localhost/tritonkit-debian:{SUITE}-{recipe_hash()}"
        with open(tarball, "rb") as data:
            if subprocess.run([podman(), "import", "-", base], stdin=data, capture_output=True).returncode != 0:
                raise TritonkitError(str(tarball), "", "podman import of the Debian root filesystem failed",
                                     f"delete {tarball} and retry")
        with tempfile.TemporaryDirectory(prefix="standin-") as context:
            containerfile = Path(context, "Containerfile")
            containerfile.write_text(CONTAINERFILE.format(base=base))
            build(Path(context), tag, containerfile=containerfile, log=logs / "build.log")
        progress(f"built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def main() -> None:
    print(ensure_image(lambda line: print(line, file=sys.stderr)))


if __name__ == "__main__":
    main()
