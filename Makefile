# kafka-batch-tuner. `make help` lists the targets.
SHELL := /bin/bash
# Everything runs in the checkout's virtual environment, made by `make install` (KBT_VENV moves it).
VENV ?= $(or $(KBT_VENV),.venv)
export KBT_VENV := $(abspath $(VENV))
PY ?= $(VENV)/bin/python
PYTEST ?= $(PY) -m pytest

.PHONY: help install install-light demo test test-unit test-integration test-e2e lint format typecheck generate check-generated snapshot bench-lab bench-probe bench-driver bench-pressure test-chaos bench-tls bench-recommend bench-p2 bench-truth

comma := ,

help: ## List the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

install: ## Install everything: Debian packages, a venv with the Python package (.venv), a recent Go, Kafka jars, jmx agent, engines
	@bash scripts/install.sh

# PIP_DISABLE_PIP_VERSION_CHECK: pip's own upgrade notice is not this install's news.
install-light: ## Only kbt in a venv (.venv): diagnose, capture, compare, forecast, render; no Java, Go or Kafka build
	@python3 -m venv $(VENV) && PIP_DISABLE_PIP_VERSION_CHECK=1 $(VENV)/bin/pip install --quiet -e . \
	  && echo "install-light: ready: $(VENV)/bin/kbt (no lab: sweeps need make install)"

# The base install first (a lab and librdkafka runs): the demo shows a first result, then installs
# the rest while its lab idles (scripts/demo.sh, KBT_DEMO_STAGED).
demo: ## Install, then run the main job on the embedded lab cluster (a first result before the Go builds)
	@t0=$$(date +%s); KBT_INSTALL_STAGE=base bash scripts/install.sh \
	  && KBT_DEMO_T0=$$t0 KBT_DEMO_STAGED=1 PYTHON=$(PY) bash scripts/demo.sh

# The report's browser test needs headless Chromium (Debian chromium): `make test` installs it too.
test: ## Install (with Chromium), then every tier: lint, the unit tier and then the fault matrix beside the integration tier, the e2e modules with labs last (what CI runs; under 60 min on CI's 2 cores, warm caches: tests/README.md, CI time)
	@bash scripts/test_all.sh

test-unit: ## Unit tests only (no network)
	@$(PYTEST) tests/unit

test-integration: ## Integration tests (real lab cluster)
	@$(PYTEST) tests/integration

test-e2e: ## End-to-end tests (kbt as a subprocess)
	@$(PYTEST) tests/e2e

test-chaos: ## The fault matrix alone, on a lab of its own (~20 min; `make test` runs it beside the integration tier; see docs/reliability.md)
	@rm -rf build/chaos; KBT_CHAOS_RESULTS=build/chaos $(PYTEST) tests/chaos; status=$$?; \
	$(PY) -m tests.chaos.reliability_doc --results build/chaos; exit $$status

lint: ## ruff (lint and format), mypy and the layer contract
	@$(PY) -m ruff check tuner tests loadtests scripts bench
	@$(PY) -m ruff format --check --quiet tuner tests loadtests scripts bench
	@$(PY) -m mypy
	@$(PY) -c "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"

format: ## Apply ruff's formatter and import order (lint fails on unformatted code)
	@$(PY) -m ruff format tuner tests loadtests scripts bench
	@$(PY) -m ruff check --select I --fix tuner tests loadtests scripts bench

typecheck: ## mypy only
	@$(PY) -m mypy

generate: ## Rebuild generated artifacts (docs/metrics.md, dashboards, profiles, CLI reference, docs/errors.md)
	@$(PY) -m tuner.cli.generate write
	@$(PY) -m tests.e2e.bad_inputs --write

check-generated: ## Fail when a committed generated artifact is stale
	@$(PY) -m tuner.cli.generate check

snapshot: ## PNG of the Broker pressure dashboard's main panels from a running lab (LAB_DIR=..., MINUTES=15, or RESULTS=... for a sweep's window)
	@$(PY) -m tuner.render.dashboards.snapshot $(if $(LAB_DIR),--lab-dir $(LAB_DIR)) --minutes $(or $(MINUTES),15) $(if $(RESULTS),--results $(RESULTS)) --out docs/broker-pressure.png

bench-lab: ## Time `kbt lab up` to healthy (3 vs 1 broker, 5 runs each; see docs/benchmarks.md)
	@$(PY) -m bench.lab_up --runs 5

bench-probe: ## Compression probe overhead vs calling the codecs directly (see docs/benchmarks.md)
	@$(PY) -m bench.probe_overhead --rounds 7

bench-driver: ## kbt's librdkafka driver vs Kafka's ProducerPerformance, max msgs/s (LAB_DIR=... reuses a lab)
	@$(PY) -m bench.driver_speed --runs 5 --base-port $(or $(BASE_PORT),19490) $(if $(LAB_DIR),--lab-dir $(LAB_DIR))

bench-pressure: ## The pressure lab's capacity curve: offered rate x {Filebeat-like, batched}, knee marked, with attribution; writes docs/pressure-curve.md and .png (~15 min; BASE_PORT=..., LAB_DIR=..., RESULTS=...)
	@$(PY) -m bench.pressure $(if $(BASE_PORT),--base-port $(BASE_PORT)) $(if $(LAB_DIR),--lab-dir $(LAB_DIR)) $(if $(RESULTS),--results $(RESULTS))

bench-tls: ## TLS cost: PLAINTEXT vs SASL_SSL side by side on a 3-broker lab of its own (BASE_PORT=...; see docs/benchmarks.md)
	@$(PY) -m bench.tls_cost --brokers 3 $(if $(BASE_PORT),--base-port $(BASE_PORT)) $(if $(OUT),--markdown $(OUT))

bench-recommend: ## P1: recommender vs Filebeat-like defaults, Filebeat model truth (~20 min, lab of its own: BASE_PORT=..., or LAB_DIR=...; see docs/benchmarks.md)
	@$(PY) -m bench.recommend $(if $(BASE_PORT),--base-port $(BASE_PORT)) $(if $(LAB_DIR),--lab-dir $(LAB_DIR)) $(if $(OUT),--markdown $(OUT))

bench-p2: ## P2: the recommender vs an exhaustive grid, 3 passes (CLIENT=librdkafka|java|filebeat, ~30 min; BASE_PORT=..., LAB_DIR=..., OUT=...)
	@$(PY) -m bench.p2 --client $(or $(CLIENT),librdkafka) --passes 3 $(if $(BASE_PORT),--base-port $(BASE_PORT)) $(if $(LAB_DIR),--lab-dir $(LAB_DIR)) $(if $(OUT),--markdown $(OUT))

bench-truth: ## Model truth on held-out shapes (loadtests/truth/): fit on FIT=dir[,dir] and its own fitting sweeps run on the same lab, predict, run for real, predicted vs measured req/s and p99 (BASE_PORT=..., LAB_DIR=..., ONLY=spec, OUT=...)
	@$(PY) -m bench.truth --base-port $(or $(BASE_PORT),19590) $(if $(LAB_DIR),--lab-dir $(LAB_DIR)) $(foreach d,$(subst $(comma), ,$(FIT)),--fit $(d)) $(foreach o,$(ONLY),--only $(o)) $(if $(OUT),--out $(OUT))
