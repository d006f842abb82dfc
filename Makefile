# Two entry points (see README): `make run` installs and runs the whole pipeline,
# `make test` installs and runs the tests, the smoke DAG, the dry-run check and the linter.
PYTHON ?= python3
VENV ?= .venv
MIRROR ?= ../shared/mirror
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)

.PHONY: run test install mirror smoke lint pytest dvc-check

run: install mirror
	snakemake --cores all

test: install mirror pytest lint smoke dvc-check

pytest: install mirror
	python -m pytest

lint: install
	ruff check src tests
	snakemake --lint
	snakemake -n --quiet

# The whole DAG on small real subsets, then a dry run that must find nothing left to do. It runs in
# its own directory (.smoke/, the sources linked in) so that it never replaces the real run's
# results/, models or paper/ tables.
SMOKE_DIR := .smoke
SMOKE_LINKS := Snakefile workflow params.yaml config src resources

smoke: install mirror
	mkdir -p $(SMOKE_DIR)
	for path in $(SMOKE_LINKS); do ln -sfn ../$$path $(SMOKE_DIR)/$$path; done
	cd $(SMOKE_DIR) && snakemake --cores 2 --configfile config/smoke.yaml
	cd $(SMOKE_DIR) && snakemake -n --configfile config/smoke.yaml | tee .snakemake/smoke-dry-run.txt
	grep -q "Nothing to be done" $(SMOKE_DIR)/.snakemake/smoke-dry-run.txt

# DVC drives the same rules: after `dvc repro` of the data stages, `dvc status` must be clean.
dvc-check: install mirror
	dvc repro data
	dvc status data | tee .snakemake/dvc-status.txt
	grep -q "up to date" .snakemake/dvc-status.txt

install: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "factlab needs Python 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==24.3.1
	# torch first, exactly pinned: an unpinned resolve would pull the CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

# Offline data: link a local mirror (raw.githubusercontent.com layout) where params.yaml looks.
mirror:
	@if [ -e resources/mirror ]; then echo "mirror: resources/mirror"; \
	elif [ -d "$(MIRROR)" ]; then ln -s "$(abspath $(MIRROR))" resources/mirror && echo "mirror: linked $(MIRROR)"; \
	else echo "mirror: none at $(MIRROR); files will be downloaded from their URLs"; fi
