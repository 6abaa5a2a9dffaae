"""Which `tritonkit[...]` extra brings a missing Python module, and the command that installs it, so that a missing
one is one line with a pip command that works.

The extras are read from tritonkit's installed metadata (pyproject's optional-dependencies), not from a second
list here; only import names that differ from their distribution's name are listed. tritonkit is on no package
index, so `pip install 'tritonkit[x]'` fails: the command names where this tritonkit was installed from (pip's
direct_url.json: a checkout, a wheel file, a VCS or archive URL).
"""
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from urllib.parse import unquote, urlparse

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


@dataclass(frozen=True)
class Origin:
    """Where pip installed this tritonkit from (its direct_url.json): a local `path` (a checkout, `editable` or not,
    or a wheel file) or a `reference` pip can install (a VCS or archive URL); neither: an index, or not recorded."""

    path: str | None = None
    editable: bool = False
    reference: str | None = None


def origin() -> Origin:
    try:
        text = metadata.distribution("tritonkit").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return Origin()
    recorded = json.loads(text) if text else {}
    url, vcs = recorded.get("url", ""), recorded.get("vcs_info")
    if url.startswith("file://") and not vcs:
        return Origin(path=unquote(urlparse(url).path), editable=recorded.get("dir_info", {}).get("editable", False))
    return Origin(reference=f"{vcs['vcs']}+{url}@{vcs['commit_id']}" if vcs else url or None)


def install_extra(*extras: str) -> str:
    """The command installing tritonkit with `extras` from where this tritonkit came from: `pip install -e
    '/checkout[export]'` (an editable checkout), `pip install '/dist/tritonkit-...whl[export]'`, `pip install
    'tritonkit[export] @ git+URL@COMMIT'`; else a sentence saying how."""
    wanted = ",".join(extras)
    source = origin()
    if source.path:
        return f"pip install {'-e ' if source.editable else ''}{shlex.quote(f'{source.path}[{wanted}]')}"
    if source.reference:
        return f"pip install {shlex.quote(f'tritonkit[{wanted}] @ {source.reference}')}"
    named = " and ".join(f"'{extra}'" for extra in extras)
    return (f"install tritonkit with the extra{'s' if len(extras) > 1 else ''} {named} from where you got it "
            f"(a checkout: pip install '<checkout>[{wanted}]'; a wheel: pip install '<wheel file>[{wanted}]')")


def install_command(module: str, prefer: str | None = None) -> str | None:
    """`install_extra` of the extra that brings `module` (`prefer` when several do), else None."""
    extras = extras_providing(module)
    return install_extra(prefer if prefer in extras else extras[0]) if extras else None


_TRITONKIT_EXTRA = re.compile(r"tritonkit\[([a-z0-9_,-]+)\]")


def install_commands(requirements: Iterable[str]) -> list[str]:
    """Commands for requirements among which tritonkit's own extras are spelled `tritonkit[x]`: those in one
    `install_extra`, the others in one `pip install`."""
    extras: list[str] = []
    others: list[str] = []
    for requirement in requirements:
        named = _TRITONKIT_EXTRA.fullmatch(requirement)
        if named:
            extras += named[1].split(",")
        else:
            others.append(requirement)
    return ([install_extra(*dict.fromkeys(extras))] if extras else []) + (
        [f"pip install {' '.join(map(shlex.quote, others))}"] if others else [])
