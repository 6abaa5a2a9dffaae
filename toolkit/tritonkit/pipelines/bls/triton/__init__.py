"""Thin `TritonPythonModel` adapters of the BLS example pipeline (`ensembles/bls.yaml`)."""
