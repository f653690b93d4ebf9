# The two entry points of the README: `make start` and `make test`. Both set up first.
SHELL := /bin/bash
ENV := . scripts/env.sh &&

.PHONY: setup start test

setup:
	@scripts/bootstrap.sh

start: setup
	@bin/voice-bridge --config config/demo-hotline.yaml start

test: setup
	@$(ENV) npm run --silent typecheck
	@$(ENV) npm run --silent lint
	@$(ENV) node scripts/run-tests.ts

