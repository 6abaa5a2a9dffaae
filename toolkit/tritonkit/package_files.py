"""Finds files that ship inside the installed tritonkit package: its code, `templates/` and `ensembles/`.

Specs name them as `tritonkit:<path>` (e.g. `tritonkit:ensembles/llm.yaml`,
`tritonkit:pipelines/llm/runtime`). In a checkout the data folders sit at the repository's top level and
are mapped into the package by the build (setup.py); in a wheel they are inside it. Resolving through the
import system covers both, so nothing depends on where the checkout is.
"""
from importlib.resources import files
from pathlib import Path

PACKAGE_PREFIX = "tritonkit:"
#: Top-level folders of the repository that are installed as data sub-packages of `tritonkit`.
DATA_FOLDERS = ("templates", "ensembles")


def package_path(relative: str) -> Path:
    """The file or folder `relative` (POSIX, e.g. `ensembles/llm.yaml`) inside the installed package."""
    head, _, rest = relative.strip("/").partition("/")
    if head in DATA_FOLDERS:
        return Path(str(files(f"tritonkit.{head}"))) / rest
    return Path(str(files("tritonkit"))) / relative


def resolve_spec_path(source: str, base: Path) -> Path:
    """A path written in a spec: `tritonkit:<path>` inside the package, anything else relative to `base`."""
    return package_path(source[len(PACKAGE_PREFIX):]) if source.startswith(PACKAGE_PREFIX) else base / source


def escapes(path: Path, project_root: Path) -> bool:
    """Whether `path`, symlinks followed, lies outside both the project folder and the tritonkit package.

    Specs are shared and built on CI machines; a spec path must not pull in (or copy into a deployable
    repository) a file such as `/etc/passwd` or `../../secrets`.
    """
    real = path.resolve()
    # `tritonkit:` paths reach the package and its data folders (apart in a checkout)
    roots = (project_root, Path(str(files("tritonkit"))), *(package_path(folder) for folder in DATA_FOLDERS))
    return not any(real.is_relative_to(root.resolve()) for root in roots)
