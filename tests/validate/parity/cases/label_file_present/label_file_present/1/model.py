"""Parity corpus stand-in model: the config and layout are under test, not this code."""


class TritonPythonModel:
    def execute(self, requests):
        return []
