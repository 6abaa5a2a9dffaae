"""Classifier pipeline: a starter only (preprocess -> classifier ensemble of Python-backend models), no runtime code."""
