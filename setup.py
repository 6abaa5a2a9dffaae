"""Source root `toolkit/` (src layout: `toolkit/tritonkit/` is the package) plus the data folders it ships.

`templates/` and `ensembles/` stay at the repository's top level, where users and reviewers look for them,
and are installed inside the package as `tritonkit/templates/` and `tritonkit/ensembles/`.
"""
from setuptools import find_namespace_packages, setup

DATA_PACKAGES = {"tritonkit.templates": "templates", "tritonkit.ensembles": "ensembles"}

setup(
    packages=[*find_namespace_packages("toolkit", include=["tritonkit*"], exclude=["*.__pycache__"]), *DATA_PACKAGES,
              "tritonkit.templates.model_config", "tritonkit.templates.deploy"],
    package_dir={"": "toolkit", **DATA_PACKAGES},
)
