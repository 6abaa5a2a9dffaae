"""How the gateway's image gets tritonkit: the same tritonkit that built the project, from where it came.

tritonkit is on no package index, so `pip install tritonkit[gateway]` in an image fails. A tritonkit installed from a
wheel file or a checkout puts that wheel (built from the checkout) in the build context beside the Dockerfile; one
installed from a VCS or archive URL installs from that URL; only a tritonkit of unrecorded origin is named by its
version, for an index of the user's own.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tritonkit import __version__
from tritonkit.errors import TritonkitError
from tritonkit.extras import origin
from tritonkit.files import created_mode

WHEEL_FOLDER = "tritonkit-wheel"   # in the compose file's folder, the gateway image's build context


@dataclass(frozen=True)
class ImageSource:
    """What the Dockerfile installs: `requirement` (pip's form, the extra included), after copying `wheel` (a file of
    the build context) when there is one."""

    requirement: str
    wheel: str | None = None


def _wheel_from(source: Path, folder: Path) -> None:
    """Puts the wheel of `source` (the wheel file itself, or one built from a checkout) into `folder`."""
    if source.suffix == ".whl":
        if not source.is_file():
            raise TritonkitError("tritonkit.yaml", "gateway", f"tritonkit was installed from {source}, which is gone: "
                                 "the gateway image installs that wheel", "put it back, or reinstall tritonkit")
        shutil.copy2(source, folder / source.name)
        return
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(folder), str(source)], capture_output=True, text=True)
    if built.returncode or not any(folder.glob("tritonkit-*.whl")):
        said = (built.stderr.strip().splitlines() or ["no wheel written"])[-1]
        raise TritonkitError("tritonkit.yaml", "gateway", f"could not build tritonkit's wheel from {source} for the "
                             f"gateway image ({said})",
                             f"run `{sys.executable} -m pip wheel --no-deps {source}` to see why, or install tritonkit "
                             "from a wheel file")


def place_image_source(context: Path) -> ImageSource:
    """The gateway image's tritonkit, its wheel (if any) written to `context`/tritonkit-wheel/ whole or not at all."""
    installed = origin()
    if installed.reference:
        return ImageSource(f"tritonkit[gateway] @ {installed.reference}")
    if not installed.path:
        return ImageSource(f"tritonkit[gateway]=={__version__}")
    staging = Path(tempfile.mkdtemp(prefix=f".{WHEEL_FOLDER}-", dir=context))
    try:
        _wheel_from(Path(installed.path), staging)
        os.chmod(staging, created_mode(directory=True))   # the image build reads it as another user
        target = context / WHEEL_FOLDER
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    [wheel] = target.glob("tritonkit-*.whl")
    return ImageSource(f"/tmp/{wheel.name}[gateway]", f"{WHEEL_FOLDER}/{wheel.name}")
