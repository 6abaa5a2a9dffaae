"""`tritonkit init` as a function: copies a starter folder into the user's project, refusing to overwrite."""
import ctypes
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.extras import install_commands
from tritonkit.package_files import package_path
from tritonkit.plugin import host
from tritonkit.plugin.contract import Starter


def starters() -> dict[str, Starter]:
    """The installed pipelines with a starter folder, `tritonkit/pipelines/<name>/starter/`, by name."""
    return {name: p.starter for name, p in host.installed().items() if p.starter is not None}


@dataclass
class InitResult:
    """What init wrote, and what is missing before `tritonkit build` can run."""

    root: Path
    pipeline: str
    written: list[Path]
    missing: list[str]  # pip requirements still to install
    missing_system: list[str] = field(default_factory=list)  # Debian packages still to install (apt-get)
    model: Path | None = None  # the user's own model the starter serves (`init --model`)

    @property
    def note(self) -> str:
        """The starter's note on its own model's answers (none for the user's model)."""
        return "" if self.model is not None else starters()[self.pipeline].note

    def summary(self) -> dict[str, object]:
        return {"project": str(self.root), "note": self.note or None,
                "pipeline": self.pipeline, "files": [p.relative_to(self.root).as_posix() for p in self.written],
                "install": self.missing, "apt_install": self.missing_system, "next": next_steps(self)}


def starter_files(pipeline: str) -> dict[str, Path]:
    """Project-relative path -> shipped file, for every file of the starter (caches left out), plus the
    package code it copies (the BLS starter's models are the shipped BLS pipeline's, kept in one place)."""
    folder = package_path(f"pipelines/{pipeline}/starter")
    files = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts}
    return files | {dest: package_path(source) for dest, source in starters()[pipeline].copies.items()}


def init_project(root: Path, pipeline: str, force: bool = False, model: Path | None = None) -> InitResult:
    """Writes the starter into `root`, serving `model` (the user's own) where given; an existing file or a model the
    starter cannot serve stops it before anything is written (an existing file unless `force`)."""
    starter = starters()[pipeline]
    files = starter_files(pipeline)
    if model is not None:
        if starter.own_model is None:
            takes = sorted(name for name, s in starters().items() if s.own_model is not None)
            raise TritonkitError(shown_path(model), "--model", f"the {pipeline} starter serves no model of your own",
                                 f"leave --model out, or use --pipeline {' or '.join(takes)}")
        starter.own_model.check(model)
    if not force:
        taken = [root / rel for rel in files if (root / rel).exists()]
        if taken:
            others = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
            raise TritonkitError(shown_path(taken[0]), "file", f"already exists{others}",
                                 "pass --force to overwrite, or init into an empty folder")
    written = []
    for rel, src in files.items():
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
        written.append(dest)
    missing = sorted({extra for module, extra in starter.needs.items() if importlib.util.find_spec(module) is None})
    if not missing:
        if model is not None and starter.own_model is not None:
            written += starter.own_model.write(root, model)
        elif starter.generate is not None:
            written += starter.generate(root)
    return InitResult(root, pipeline, written, missing,
                      sorted({package for library, package in starter.libraries.items() if not _loadable(library)}),
                      model)


def _loadable(library: str) -> bool:
    """Whether the dynamic loader finds `library` (as the model that needs it will load it)."""
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def next_steps(result: InitResult) -> list[str]:
    steps = [f"apt-get install {' '.join(result.missing_system)}"] if result.missing_system else []
    steps += install_commands(result.missing)
    if result.missing and starters()[result.pipeline].generate_command:
        steps.append(starters()[result.pipeline].generate_command)
    cd = [] if result.root.resolve() == Path.cwd().resolve() else [f"cd {shown_path(result.root)}"]
    return cd + steps + ["tritonkit build", "tritonkit serve --background", "tritonkit smoke", "tritonkit stop"]
