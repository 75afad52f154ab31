# Both entry points bootstrap their own virtual environment: a fresh clone needs only python3 and git.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.carrytool-installed

.PHONY: demo docs test bench clean lint-ci mutation

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "carrytool needs Python >= 3.10"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/carrytool demo

# Every block of command output in README.md and docs/ between `<!-- generated: NAME -->` markers, rerun
# on the demo scenario (tools/gendocs.py); tests/test_docs_generated.py fails when one is stale.
docs: $(STAMP)
	$(BIN)/python -m tools.gendocs

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# action.yml and the example workflows against GitHub's schemas, and the workflows through actionlint
# (also checked by tests/test_action.py, which also lints them against action.yml's inputs)
lint-ci: $(STAMP)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-actions action.yml
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows examples/github/*.yml
	$(BIN)/actionlint examples/github/*.yml

# Mutation score (slow: not part of `make test`; run before a release or after a large change).
# Default: the committed seeded sample of mutants of the core packages (docs/mutation-sample.txt), within
# a 90-minute budget. MUTATION_ARGS: --all (every mutant, hours), --size N --seed S (another sample),
# --only-survivors (recheck the last run's survivors), --list (count mutants), --max-children N, --budget MIN.
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[mutation]'
	$(BIN)/python -m bench.mutation $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
