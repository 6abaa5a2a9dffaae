"""Where and how many copies of a model run, and which versions are served."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tritonkit.spec.base import StrictModel


class RateLimiterResource(StrictModel):
    """A named resource an instance needs before it may execute."""

    name: str = Field(min_length=1)
    count: int = Field(ge=0)
    global_: bool = Field(default=False, alias="global")


class RateLimiter(StrictModel):
    """Rate limiting of one instance group."""

    resources: list[RateLimiterResource] = Field(default_factory=list)
    priority: int = Field(default=0, ge=0)


class InstanceGroup(StrictModel):
    """A set of model instances of one kind."""

    name: str | None = None
    kind: Literal["KIND_AUTO", "KIND_GPU", "KIND_CPU", "KIND_MODEL"] = "KIND_AUTO"
    count: int | None = Field(default=None, ge=1, description="Instances of this group (per GPU for KIND_GPU). Unset: "
                              "Triton's default, 2 for KIND_CPU (and KIND_AUTO on a machine without a GPU) on the "
                              "onnxruntime and tensorflow backends, 1 otherwise.")
    gpus: list[int] = Field(default_factory=list)
    rate_limiter: RateLimiter | None = None
    passive: bool = False
    host_policy: str | None = None
    profile: list[str] = Field(default_factory=list, description="TensorRT optimization profiles this group's "
                               "instances use (TensorRT models only).")


class LatestVersions(StrictModel):
    """Serve the newest N versions."""

    num_versions: int = Field(default=1, ge=1)


class AllVersions(StrictModel):
    """Serve every version found."""


class SpecificVersions(StrictModel):
    """Serve exactly these versions."""

    versions: list[int] = Field(min_length=1)


class VersionPolicy(StrictModel):
    """Which versions Triton loads; exactly one of latest, all, specific."""

    latest: LatestVersions | None = None
    all: AllVersions | None = None
    specific: SpecificVersions | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> VersionPolicy:
        chosen = [n for n in ("latest", "all", "specific") if getattr(self, n) is not None]
        if len(chosen) != 1:
            found = " and ".join(chosen) + " are both set" if chosen else "no policy is chosen"
            raise ValueError(f"{found}; set exactly one of latest, all or specific")
        return self
