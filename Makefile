# Two entry points (see README): `make run` installs and runs the whole pipeline,
# `make test` installs and runs the tests, the smoke DAG, the dry-run check and the linter.
PYTHON ?= python3
VENV ?= .venv
MIRROR ?= ../shared/mirror
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)

.PHONY: run test install bytecode tex browser mirror smoke smoke-check smoke-matrix lint pytest dvc-check smoke-views dvc-one-parameter checker rerun-identical gpu-check slurm-check

run: install tex mirror bytecode
	snakemake --cores all

test: install tex browser mirror pytest lint smoke smoke-check dvc-check smoke-views dvc-one-parameter smoke-matrix rerun-identical

# The checker folder alone (README, "A checker without the whole run"): the aligner, AlignScore's tuning and
# validation scores and the token head's validation reading; no QASem parser and no other scorer
# (tests/test_token_reading.py).
checker: install mirror bytecode
	snakemake --cores all results/checker/model

# Test files spread over one worker per core (pytest-xdist); a file's tests share one worker, so each module
# fixture is built once. At most 8
# workers: each may hold a model and the mirror's frames in memory.
PYTEST_WORKERS ?= $(shell n=$$(nproc); echo $$((n < 8 ? n : 8)))
pytest: install tex browser mirror bytecode
	python -m pytest -n $(PYTEST_WORKERS) --dist loadfile

# On a machine with CUDA, after `snakemake --cores all check_training_leakage preprocess` (or a full run): the CUDA
# parity tests, the aligner on config/gpu.yaml's recipe, and the engine's throughput, into benchmarks/gpu/
# (scripts/gpu_check.sh). CI has no GPU and never runs it.
gpu-check: install
	scripts/gpu_check.sh benchmarks/gpu

# Debian packages: TeX for rule paper_pdf (about 50 MB download), Chromium for the report's browser test.
APT_INSTALL := apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
tex:
	command -v pdflatex >/dev/null && command -v pdfinfo >/dev/null || \
	  $(APT_INSTALL) latexmk texlive-latex-base texlive-latex-recommended poppler-utils

browser:
	command -v chromium >/dev/null || $(APT_INSTALL) chromium

lint: install
	ruff check src tests
	ruff format --check src tests
	snakefmt --check Snakefile workflow/rules
	deptry src
	snakemake --lint
	snakemake -n --quiet

# The whole DAG on small real subsets, then a dry run that must find nothing left to do. It runs in
# its own directory (.smoke/, the sources linked in, params.yaml = params.yaml + config/smoke.yaml)
# so that it never replaces the real run's results/, models or paper/ tables.
SMOKE_DIR := .smoke
SMOKE_LINKS := Snakefile workflow profiles config src resources dvc.yaml .dvcignore
# params.yaml with the given files merged over it, as Snakemake merges --configfile.
MERGE_PARAMS := python -c 'import sys, yaml; from snakemake.utils import update_config; params = {}; \
  [update_config(params, yaml.safe_load(open(path))) for path in sys.argv[1:]]; yaml.safe_dump(params, sys.stdout, sort_keys=False)'

# Without a network: the smoke runs inside a new network namespace (unshare -rn) where the kernel allows
# one, so a download that skipped the mirror would fail it. CI requires it (FACTLAB_REQUIRE_OFFLINE=1).
OFFLINE := $(shell unshare -rn true 2>/dev/null && echo unshare -rn)

smoke: install tex mirror bytecode
	@test -n "$(OFFLINE)" || test -z "$$FACTLAB_REQUIRE_OFFLINE" || { echo "smoke: no network namespace (unshare -rn)" >&2; exit 1; }
	mkdir -p $(SMOKE_DIR)
	# A link is made only where it is missing or points elsewhere: a new link's mtime would make the rules that read
	# the Snakefile through it (write_paper_main) out of date.
	for path in $(SMOKE_LINKS); do test "$$(readlink $(SMOKE_DIR)/$$path)" = ../$$path || ln -sfn ../$$path $(SMOKE_DIR)/$$path; done
	rm -f $(SMOKE_DIR)/params.yaml
	$(MERGE_PARAMS) params.yaml config/smoke.yaml > $(SMOKE_DIR)/params.yaml
	cd $(SMOKE_DIR) && $(OFFLINE) snakemake --cores 2
	cd $(SMOKE_DIR) && snakemake -n | tee .snakemake/smoke-dry-run.txt
	grep -q "Nothing to be done" $(SMOKE_DIR)/.snakemake/smoke-dry-run.txt

# The library face on the smoke run: factlab.check and `factlab check` with its checker folder give the pipeline's
# own AlignScore scores for the same pairs; and adding one custom benchmark plans no training or tuning job and
# rescores no other benchmark (a dry run).
smoke-check: smoke
	python tests/smoke_check.py $(SMOKE_DIR)
	python tests/paper_headers.py $(SMOKE_DIR)/paper/tables paper/tables
	python tests/smoke_custom_plan.py $(SMOKE_DIR) config/smoke_custom.yaml
	python tests/smoke_scorer_plan.py $(SMOKE_DIR) config/smoke_user_scorer.yaml

# DVC drives the same rules (dvc.yaml is generated from them: python -m factlab.workflow.dvcyaml). In the smoke
# directory, just built by Snakemake, `dvc repro` runs every stage and each must find nothing to do
# (the two tools agree on what is up to date); then `dvc status` must find nothing changed.
dvc-check: smoke
	cd $(SMOKE_DIR) && (test -d .dvc || dvc init --no-scm --quiet) && dvc config core.analytics false
	cd $(SMOKE_DIR) && dvc repro --force 2>&1 | tee .snakemake/dvc-repro.txt
	test "$$(grep -c '^Running stage' $(SMOKE_DIR)/.snakemake/dvc-repro.txt)" -eq \
	  "$$(grep -c '^Nothing to be done' $(SMOKE_DIR)/.snakemake/dvc-repro.txt)"
	cd $(SMOKE_DIR) && dvc status | tee .snakemake/dvc-status.txt
	grep -q "up to date" $(SMOKE_DIR)/.snakemake/dvc-status.txt

# How a reader looks at the finished smoke run: `dvc metrics show` (every metrics file, with numbers), `dvc plots
# show` (every plot, no missing field) and `snakemake --report` (every table and figure of its paper/).
smoke-views: dvc-check
	python tests/smoke_views.py $(SMOKE_DIR)

# One parameter at a time changed in a copy of the checked smoke directory (the second on top of the first):
# `dvc status` names only the stage that reads it, and `dvc repro` reruns the rules reading it (and what depends
# on them), not a rule of the same stage that does not read it, and nothing upstream: a FRANK analysis key, then
# a threshold-policy key.
dvc-one-parameter: dvc-check
	rm -rf $(SMOKE_DIR)-param && cp -a $(SMOKE_DIR) $(SMOKE_DIR)-param
	python tests/dvc_one_parameter.py $(SMOKE_DIR)-param metaeval.frank.partial_variant ranked metaeval \
	  correlate_frank_baselines evaluate_localisation
	python tests/dvc_one_parameter.py $(SMOKE_DIR)-param metaeval.localisation.threshold_policies '[fixed05]' metaeval \
	  evaluate_localisation correlate_frank_baselines

# CI's configuration matrix, each run over a copy of the smoke run (only what its keys change reruns),
# through the whole DAG: config/smoke_variant.yaml (ranked partial correlations, spaCy splitter, a
# custom benchmark, user scorers: a Python callable, a tiny local NLI model and a tiny aligner) and config/smoke_hub.yaml (the hub QASem parser on a tiny T5 built here).
smoke-matrix: smoke
	for variant in variant hub; do \
	  rm -rf $(SMOKE_DIR)-$$variant && cp -a $(SMOKE_DIR) $(SMOKE_DIR)-$$variant && \
	  $(MERGE_PARAMS) params.yaml config/smoke.yaml config/smoke_$$variant.yaml > $(SMOKE_DIR)-$$variant/params.yaml || exit 1; \
	done
	python tests/tiny_t5.py $(SMOKE_DIR)-hub/tiny_t5 $(SMOKE_DIR)/results/preprocess/*/sentences.parquet
	python tests/tiny_nli.py $(SMOKE_DIR)-variant/tiny_nli
	python tests/tiny_aligner.py $(SMOKE_DIR)-variant/tiny_aligner
	cd $(SMOKE_DIR)-variant && snakemake --cores 2 && snakemake -n | grep -q "Nothing to be done"
	cd $(SMOKE_DIR)-hub && snakemake --cores 2 && snakemake -n | grep -q "Nothing to be done"

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

# factlab's modules compiled to bytecode before a run. Where PYTHONDONTWRITEBYTECODE is set, Python never caches
# them, and each job (one process) would compile the modules it imports again. Only changed files are recompiled.
bytecode: install
	python -m compileall -q src

# Offline data: link a local mirror (raw.githubusercontent.com layout) where params.yaml looks.
mirror:
	@if [ -e resources/mirror ]; then echo "mirror: resources/mirror"; \
	elif [ -d "$(MIRROR)" ]; then ln -s "$(abspath $(MIRROR))" resources/mirror && echo "mirror: linked $(MIRROR)"; \
	else echo "mirror: none at $(MIRROR); files will be downloaded from their URLs"; fi

# Reproducibility, in a copy of the smoke run: the aligner retrained and everything downstream rebuilt,
# killed with SIGKILL in the training and again in the scoring, resumed (snakemake --unlock, then
# --rerun-incomplete); every model, score, table and figure must be byte-identical to the first run's.
rerun-identical: smoke
	rm -rf $(SMOKE_DIR)-kill && cp -a $(SMOKE_DIR) $(SMOKE_DIR)-kill
	$(OFFLINE) python tests/kill_resume.py $(SMOKE_DIR)-kill $(SMOKE_DIR)

# The smoke DAG on SLURM: in its own directory (.smoke-slurm/, from empty, the smoke's params.yaml), every job
# submitted with sbatch through the cluster profile (snakemake --profile workflow/profiles/slurm) to a one-node
# cluster on this machine (scripts/slurm_local.sh: Debian's slurmctld, slurmd and munge, started as root; state in
# SLURM_STATE). Two options suit that cluster: job states read with squeue (it has no accounting database for
# sacct) and first polled after 2 s, not the plugin's 40. Every artefact must then be byte-identical to the local
# smoke run's (tests/run_digests.py; the timing files exempt, as in rerun-identical). Then one job is made to fail
# once: the datasets table rerun with a `factlab` that fails its first call (tests/fail_once), which the profile's
# `retries: 1` submits again; two submissions, and the table is still identical. No unshare -rn here: sbatch and the
# jobs reach slurmctld and slurmd on localhost (the smoke's params forbid downloads all the same). Not in `make test`:
# each job starts a Snakemake of its own in its SLURM job, which makes the run much longer than the local smoke.
SLURM_DIR := $(SMOKE_DIR)-slurm
SLURM_STATE ?= /tmp/factlab-slurm
SLURM_SNAKEMAKE := snakemake --profile workflow/profiles/slurm --slurm-status-command squeue \
  --slurm-init-seconds-before-status-checks 2
slurm-check: export FACTLAB_SLURM_DIR := $(SLURM_STATE)
slurm-check: smoke
	scripts/slurm_local.sh
	rm -rf $(SLURM_DIR) && mkdir -p $(SLURM_DIR)
	for path in $(SMOKE_LINKS); do ln -s ../$$path $(SLURM_DIR)/$$path; done
	cp $(SMOKE_DIR)/params.yaml $(SLURM_DIR)/params.yaml
	cd $(SLURM_DIR) && $(SLURM_SNAKEMAKE)
	cd $(SLURM_DIR) && snakemake -n | tee .snakemake/slurm-dry-run.txt
	grep -q "Nothing to be done" $(SLURM_DIR)/.snakemake/slurm-dry-run.txt
	python tests/run_digests.py write $(SMOKE_DIR) $(SLURM_DIR)/.snakemake/smoke-digests.json
	python tests/run_digests.py compare $(SLURM_DIR) $(SLURM_DIR)/.snakemake/smoke-digests.json
	cd $(SLURM_DIR) && PATH=$(abspath tests/fail_once):$$PATH FACTLAB_FAIL_ONCE=$$PWD/.snakemake/failed-once \
	  $(SLURM_SNAKEMAKE) --forcerun tabulate_datasets -- paper/tables/datasets.md > .snakemake/slurm-retry.txt 2>&1 || \
	  { cat .snakemake/slurm-retry.txt; exit 1; }
	cat $(SLURM_DIR)/.snakemake/slurm-retry.txt
	test -e $(SLURM_DIR)/.snakemake/failed-once
	grep -q "SLURM status is: 'FAILED'" $(SLURM_DIR)/.snakemake/slurm-retry.txt
	grep -q "Trying to restart job" $(SLURM_DIR)/.snakemake/slurm-retry.txt
	test "$$(grep -c 'has been submitted with SLURM jobid' $(SLURM_DIR)/.snakemake/slurm-retry.txt)" -eq 2
	python tests/run_digests.py compare $(SLURM_DIR) $(SLURM_DIR)/.snakemake/smoke-digests.json
