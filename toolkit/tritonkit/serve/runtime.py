"""Prepares a runnable Triton 2.51 from the `nvidia-pytriton` wheel, once per Python version.

The wheel ships `tritonserver` with an RPATH relative to site-packages and one Python-backend stub per
Python version, so it cannot run in place for our purposes: the stub for the running interpreter has to
sit in `backends/python/`, and the libraries need `LD_LIBRARY_PATH`. The prepared copy lives in a cache
(`~/.cache/tritonkit/runtime/<triton>-py<XY>-<wheel location hash>/`, or under `$TRITONKIT_CACHE`) and is reused.
"""
import ctypes.util
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tritonkit import TRITON_VERSION
from tritonkit.errors import TritonkitError
from tritonkit.extras import install_extra
from tritonkit.files import Below

#: The wheel that ships Triton 2.51.0; other versions ship other servers and are not validated.
PYTRITON_VERSION = "0.7.0"
#: Names perf_analyzer (tritonclient 2.51) links against, and the wheel library that provides each.
PERF_LIBRARY_ALIASES = {"libb64.so.0d": "libb64-", "libcudart.so.12": "libcudart-"}
_MARKER = "tritonkit-runtime.txt"


@dataclass(frozen=True)
class Runtime:
    """A prepared runtime directory and the environment its binaries need."""

    root: Path
    env: dict[str, str]
    tritonserver = Below("bin", "tritonserver")
    backends = Below("backends")
    caches = Below("caches")


def cache_root() -> Path:
    """`$TRITONKIT_CACHE` when set, else `~/.cache/tritonkit` (honouring `$XDG_CACHE_HOME`)."""
    if os.environ.get("TRITONKIT_CACHE"):
        return Path(os.environ["TRITONKIT_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "tritonkit"


def python_tag() -> str:
    """`3.11` for the running interpreter: the stub folder name inside the wheel."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def wheel_paths() -> tuple[Path, Path]:
    """(`pytriton/tritonserver`, `nvidia_pytriton.libs`) of the installed wheel, or a one-line error."""
    try:
        version = importlib.metadata.version("nvidia-pytriton")
    except importlib.metadata.PackageNotFoundError:
        version = None
    spec = importlib.util.find_spec("pytriton")
    if version is None or spec is None or not spec.submodule_search_locations:
        raise TritonkitError("nvidia-pytriton", "", "the embedded Triton server is not installed",
                             install_extra("serve"))
    if version != PYTRITON_VERSION:
        raise TritonkitError(
            "nvidia-pytriton", "version",
            f"nvidia-pytriton {version} is installed but tritonkit runs Triton {TRITON_VERSION} from "
            f"nvidia-pytriton {PYTRITON_VERSION}", install_extra("serve"),
        )
    package = Path(next(iter(spec.submodule_search_locations)))
    server, libs = package / "tritonserver", package.parent / "nvidia_pytriton.libs"
    if not (server / "bin" / "tritonserver").is_file() or not libs.is_dir():
        raise TritonkitError(str(package), "", "the nvidia-pytriton wheel has no tritonserver binary",
                             f"reinstall it: pip install --force-reinstall nvidia-pytriton=={PYTRITON_VERSION}")
    return server, libs


def stub_path(server: Path) -> Path:
    """The Python-backend stub built for the running interpreter, or a one-line error naming the choices."""
    stubs = server / "python_backend_stubs"
    stub = stubs / python_tag() / "triton_python_backend_stub"
    if not stub.is_file():
        have = sorted(p.name for p in stubs.iterdir() if p.is_dir()) if stubs.is_dir() else []
        raise TritonkitError(
            sys.executable, "", f"Python {python_tag()} has no Triton Python-backend stub "
            f"(the wheel has {', '.join(have) or 'none'})", "run tritonkit with one of those Python versions",
        )
    return stub


def libpython_dir() -> Path | None:
    """The interpreter's own LIBDIR when it holds the shared libpython; None if only a system copy exists.

    The stub links `libpython3.X.so.1.0`; it must be the running interpreter's build, or models fail to
    load with errors like `'_thread.RLock' object has no attribute '_recursion_count'`.
    """
    soname = f"libpython{python_tag()}.so.1.0"
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and (Path(libdir) / soname).exists():
        return Path(libdir)
    if ctypes.util.find_library(f"python{python_tag()}"):
        return None
    raise TritonkitError(
        sys.executable, "", f"no shared library {soname} for this interpreter; the Python-backend stub needs it",
        f"use a Python built with --enable-shared, or install the system package libpython{python_tag()}",
    )


def _alias_libraries(libs: Path, target: Path) -> None:
    """Symlinks the plain library names perf_analyzer asks for to the wheel's hashed copies."""
    target.mkdir(parents=True, exist_ok=True)
    for alias, prefix in PERF_LIBRARY_ALIASES.items():
        found = sorted(libs.glob(f"{prefix}*"))
        if found:
            (target / alias).symlink_to(found[0])


def runtime_name(server: Path) -> str:
    """`2.51.0-py311-<hash of the wheel's location>`: one prepared copy per environment, so a server started
    from another virtualenv never rebuilds (and pulls the stub from under) the copy a running server uses."""
    digest = hashlib.sha256(str(server.resolve()).encode()).hexdigest()[:10]
    return f"{TRITON_VERSION}-py{python_tag().replace('.', '')}-{digest}"


def _is_current(root: Path, server: Path) -> bool:
    """Whether `root` is complete and was prepared from this very wheel."""
    marker = root / _MARKER
    return marker.is_file() and marker.read_text().strip() == str(server)


def _build(server: Path, libs: Path, root: Path) -> None:
    """Copies the server and the stub into a fresh directory, then moves it into place atomically."""
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
    try:
        shutil.copytree(server, tmp / "tree", symlinks=True,
                        ignore=shutil.ignore_patterns("python_backend_stubs", "__pycache__"))
        shutil.copy2(stub_path(server), tmp / "tree" / "backends" / "python" / "triton_python_backend_stub")
        _alias_libraries(libs, tmp / "tree" / "lib")
        (tmp / "tree" / _MARKER).write_text(f"{server}\n")
        shutil.rmtree(root, ignore_errors=True)
        try:
            os.replace(tmp / "tree", root)
        except OSError:
            if not _is_current(root, server):  # another process won the race with the same content
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def environment(root: Path, libs: Path) -> dict[str, str]:
    """The process environment for tritonserver, its stubs and perf_analyzer."""
    env = dict(os.environ)
    ld = [str(p) for p in (libpython_dir(), libs, root / "lib", env.get("LD_LIBRARY_PATH")) if p]
    env["LD_LIBRARY_PATH"] = os.pathsep.join(ld)
    # The stub embeds Python and finds its packages through the first `python3` on PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # Keep `__pycache__` folders out of the (built, read-only in spirit) model repository.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def prepare_runtime(cache: Path | None = None) -> Runtime:
    """Returns the prepared runtime, building it on first use (or when the wheel moved)."""
    server, libs = wheel_paths()
    stub_path(server)
    root = (cache or cache_root()) / "runtime" / runtime_name(server)
    if not _is_current(root, server):
        _build(server, libs, root)
    return Runtime(root=root, env=environment(root, libs))


def perf_analyzer_path() -> Path:
    """The perf_analyzer that `tritonclient[all]==2.51.0` installs next to the interpreter."""
    candidate = Path(sys.executable).parent / "perf_analyzer"
    found = candidate if candidate.is_file() else shutil.which("perf_analyzer")
    if not found:
        raise TritonkitError("perf_analyzer", "", "perf_analyzer is not installed",
                             "pip install 'tritonclient[all]==2.51.0'")
    return Path(found)
