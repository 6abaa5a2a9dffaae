"""Maps the source folder `toolkit/` to the import name `tritonkit` and ships `templates/` with it."""
from setuptools import find_packages, setup

setup(
    packages=["tritonkit", *(f"tritonkit.{p}" for p in find_packages("toolkit")), "tritonkit.templates"],
    package_dir={"tritonkit": "toolkit", "tritonkit.templates": "templates"},
)
