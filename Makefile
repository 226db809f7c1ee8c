# The two commands of the README: `make run` (the main job on config/default.yaml) and `make test`.
# Both install what they need themselves.
SHELL := /bin/bash
NODE_STAMP := node_modules/.telebench-installed
TELEBENCH := node bin/telebench.js
CONFIG ?= config/default.yaml
PIPELINE ?= all

.PHONY: run test lint format bench setup clean-state build

# --foreground-scripts: install scripts print as they run (better-sqlite3 compiling from source
# when its prebuilt binary cannot be downloaded takes about 5 minutes; without it npm is silent).
$(NODE_STAMP): package.json package-lock.json
	@echo "npm ci: installing dependencies (1-2 min; about 6 min where better-sqlite3 must compile from source)"
	npm ci --no-audit --no-fund --foreground-scripts
	@touch $@

# npm ci builds dist/telebench.js (prepare); bin/telebench.js rebuilds it when a source is newer.
build: $(NODE_STAMP)
	npm run build

setup: $(NODE_STAMP)
	node scripts/setup.mjs

# make run PIPELINE=resilience LIMIT=50: one branch, and at most LIMIT items per stage (a sample);
# RETRY_FAILED=1 runs the items that failed in an earlier run again.
run: setup
	$(TELEBENCH) run $(PIPELINE) --config $(CONFIG) $(if $(LIMIT),--limit $(LIMIT),) $(if $(RETRY_FAILED),--retry-failed,)

test: setup
	npx vitest run

lint: $(NODE_STAMP)
	npx tsc --noEmit -p tsconfig.json
	npx eslint .
	npx prettier --check .

format: $(NODE_STAMP)
	npx prettier --write .

bench: setup
	node scripts/bench.mjs
