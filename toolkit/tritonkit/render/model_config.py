"""Renders one model's config.pbtxt from `templates/model_config/`."""
from functools import lru_cache

import jinja2

from tritonkit.package_files import package_path
from tritonkit.render.pbtxt_filters import FILTERS
from tritonkit.spec.model import ModelSpec
from tritonkit.triton.model_graph import BLS_CALLS_PARAMETER


@lru_cache(maxsize=1)
def template_environment() -> jinja2.Environment:
    """The shared Jinja environment: StrictUndefined, so a missing value fails instead of rendering empty."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(package_path("templates"))), autoescape=False,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(FILTERS)
    env.globals["BLS_CALLS_PARAMETER"] = BLS_CALLS_PARAMETER
    return env


def render_model_config(name: str, model: ModelSpec, origin: str) -> str:
    """config.pbtxt text for `model`; `origin` names the spec file in the header comment."""
    text = template_environment().get_template("model_config/config.pbtxt.j2").render(name=name, m=model, origin=origin)
    return "\n".join(line for line in text.splitlines() if line.strip()) + "\n"
