"""The classifier starter as a pipeline: two Python-backend models in an ensemble, no runtime code of its own."""
from tritonkit.plugin.contract import Pipeline, Starter

PIPELINE: Pipeline = Pipeline(
    "classifier", "a preprocess -> classifier ensemble of Python-backend models with smoke known answers", Starter())
