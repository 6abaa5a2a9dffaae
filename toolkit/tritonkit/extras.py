"""Which `tritonkit[...]` extra brings a missing Python module, so that a missing one is one line with the pip command.

The extras are read from tritonkit's installed metadata (pyproject's optional-dependencies), not from a second
list here; only import names that differ from their distribution's name are listed.
"""
import re
from importlib import metadata

#: Import name -> distribution, where the two differ beyond `_` and `-`.
DISTRIBUTION = {"pytriton": "nvidia-pytriton", "model_analyzer": "triton-model-analyzer", "ruamel": "ruamel.yaml",
                "multipart": "python-multipart", "kaldi_native_fbank": "kaldi-native-fbank"}
#: Extras for working on tritonkit itself, never the one a command needs.
_NOT_FOR_COMMANDS = {"dev", "docs"}
_MISSING = re.compile(r"No module named '([^']+)'")
_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*).*;.*extra\s*==\s*['\"]([^'\"]+)['\"]")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def missing_module(text: str) -> str | None:
    """The top-level module of `No module named 'x.y'` in a message or log line, else None."""
    found = _MISSING.search(text)
    return found.group(1).split(".")[0] if found else None


def extras_providing(module: str) -> list[str]:
    """The extras whose requirements install `module`, in pyproject's order (empty: not one of tritonkit's)."""
    wanted = _canonical(DISTRIBUTION.get(module, module))
    try:
        requirements = metadata.requires("tritonkit") or []
    except metadata.PackageNotFoundError:
        return []
    found = [m.group(2) for r in requirements if (m := _REQUIREMENT.match(r)) and _canonical(m.group(1)) == wanted]
    return [extra for extra in dict.fromkeys(found) if extra not in _NOT_FOR_COMMANDS]


def install_command(module: str, prefer: str | None = None) -> str | None:
    """`pip install 'tritonkit[export]'` for a module an extra brings (`prefer` when several do), else None."""
    extras = extras_providing(module)
    return f"pip install 'tritonkit[{prefer if prefer in extras else extras[0]}]'" if extras else None
