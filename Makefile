# Two entry points: `make demo` and `make test`. Both build .venv from scratch when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   := $(VENV)/.demo-installed

SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test fast docs lint clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip

# The demo installs what it runs: bankproof and the cuda extra (NVRTC, for its CUDA C++ example).
$(DEMO): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -qq -e ".[cuda]"
	touch $(DEMO)

# The tests take every extra: the oracles (Triton), Ray, the CUDA headers, the MCP SDK, the test tools.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -qq -e ".[test,triton,ray,cuda,mcp,numba,cute-dsl]"
	touch $(STAMP)

demo: $(DEMO)
	$(BIN)/bankproof layout "#ttg.swizzled_shared<{vec = 2, perPhase = 1, maxPhase = 16, order = [1, 0]}>" --shape 16x32 --dtype f32
	$(BIN)/bankproof layout "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>" --shape 16x32
	$(BIN)/bankproof layout "Sw<3,2,3> o (8,8):(1,8)" --dtype f32 --banks
	$(BIN)/bankproof show examples/transpose_16x32_xor_m.toml --access read
	$(BIN)/bankproof synth examples/transpose_16x32_plain.toml
	$(BIN)/bankproof verify examples/transpose_16x32_xor_2m.toml --html demo-report.html
	$(BIN)/bankproof kernel examples/cuda/transpose.cu --kernel transpose_padded --block 32x8 --arg n=1024
	@echo "open demo-report.html for the page (verdicts, bank maps, matrices, the §5.4 construction)"
	@echo "the live workbench: $(BIN)/bankproof serve   (then open http://127.0.0.1:8765/)"
	@echo "the README's commands as printed: . $(VENV)/bin/activate   (puts bankproof on PATH)"

# The HTML report and workbench tests render pages in Debian's headless Chromium; the workbench
# test drives it through Debian's chromedriver (Selenium; no browser is downloaded).
browser:
	@{ command -v chromium && command -v chromedriver; } >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium and chromium-driver (the page tests run in them)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver >/dev/null; }

test: $(STAMP) browser
	$(BIN)/ruff check .
	BANKPROOF_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q --durations=15

# The developer's loop (about 30 s here): every test but the slow kinds (compiles, Ray, the browser,
# whole GPU replays, long fuzzing, anything over half a second), every module's doctests included.
fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not slow"

# The documentation site (Sphinx, warnings as errors): build/docs/index.html
docs: $(STAMP)
	$(BIN)/python docs/generate.py
	$(BIN)/python -m sphinx -W -q -b html docs build/docs

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info
