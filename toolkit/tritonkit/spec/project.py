"""The top-level spec file and the pipeline files in `ensembles/` it includes."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from tritonkit.errors import Problem
from tritonkit.spec.base import StrictModel
from tritonkit.spec.gateway import GatewaySpec
from tritonkit.spec.model import DeploySpec, ModelSpec
from tritonkit.spec.smoke import SmokeCase
from tritonkit.spec.tuned import TunedModel


class PipelineFile(StrictModel):
    """A pipeline spec (e.g. `ensembles/llm.yaml`): models that belong together, includable from any spec."""

    description: str | None = None
    include: list[str] = Field(default_factory=list, description="Other spec files, relative to this one.")
    models: dict[str, ModelSpec] = Field(default_factory=dict)


class ProjectFile(PipelineFile):
    """`tritonkit.yaml`: the models and pipelines of a deployment, and how it is deployed."""

    version: Literal[1] = 1
    deploy: DeploySpec = Field(default_factory=DeploySpec)
    gateway: GatewaySpec | None = Field(default=None, description="`tritonkit gateway`: OpenAI-compatible routes; "
                                        "with this section the compose file gets a gateway service.")
    tuned: dict[str, TunedModel] = Field(default_factory=dict, description="Written by `tritonkit tune`: winning "
                                         "settings that override the models' own.")
    smoke: dict[str, list[SmokeCase]] = Field(default_factory=dict, description="Model name -> more "
                                              "known-answer cases, for models an included pipeline file defines "
                                              "(it cannot be redefined).")


@dataclass
class SmokeCases:
    """Known-answer cases of one model from one spec file: where they are written and what their paths are
    relative to."""

    file: Path
    field: str
    cases: list[SmokeCase]


@dataclass
class Project:
    """A loaded spec with every include resolved; remembers which file defined each model."""

    spec_path: Path
    deploy: DeploySpec
    models: dict[str, ModelSpec] = field(default_factory=dict)
    origins: dict[str, Path] = field(default_factory=dict)
    added_smoke: dict[str, list[SmokeCase]] = field(default_factory=dict)
    gateway: GatewaySpec | None = None
    warnings: list[Problem] = field(default_factory=list)   # read but worth a line (an old spelling), shown by build

    @property
    def root(self) -> Path:
        return self.spec_path.parent

    def origin(self, model: str) -> Path:
        return self.origins.get(model, self.spec_path)

    def smoke_cases(self, model: str) -> list[SmokeCases]:
        """The model's own `smoke:` cases, then those the project file's `smoke:` adds for it."""
        own = SmokeCases(self.origin(model), f"models.{model}.smoke", self.models[model].smoke)
        return [own, SmokeCases(self.spec_path, f"smoke.{model}", self.added_smoke.get(model, []))]

    def origin_label(self, model: str) -> str:
        """The defining file relative to the project root: stable text for generated-file headers."""
        origin = self.origin(model)
        return origin.relative_to(self.root).as_posix() if origin.is_relative_to(self.root) else origin.name
