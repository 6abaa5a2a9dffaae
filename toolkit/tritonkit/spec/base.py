"""A strict pydantic base: unknown keys are errors with a "did you mean" hint."""
import difflib
import re
from typing import Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError


def suggest(word: str, choices: list[str]) -> str:
    """The closest known name to `word`, phrased as a fix."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else "known keys: " + ", ".join(sorted(choices))


def env_variable(example: str) -> AfterValidator:
    """A str field's check that it names an environment variable (where a secret is read from)."""

    def check(value: str, info: ValidationInfo) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError(f"{info.field_name} {value!r} is not an environment variable name; use letters, digits "
                             f"and '_', e.g. {example}")
        return value
    return AfterValidator(check)


class StrictModel(BaseModel):
    """Base of every spec section: forbids unknown keys and names the closest known one."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = {*cls.model_fields, *(field.alias for field in cls.model_fields.values() if field.alias)}
        for key in data:
            if str(key) not in known:
                raise PydanticCustomError("unknown_key", "unknown key '{key}'; {hint}",
                                          {"key": str(key), "hint": suggest(str(key), sorted(known))})
        return data
