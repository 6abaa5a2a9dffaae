"""tritonkit's pipelines and this one: the registry a process installs to run with it (TRITONKIT_PIPELINES)."""
from tests.pipelines.echo.plugin import PIPELINE as ECHO
from tritonkit.pipelines.registry import PIPELINES as SHIPPED

PIPELINES = {**SHIPPED, ECHO.name: ECHO}
