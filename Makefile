# Two commands: `make bench` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Tools the test suite drives for real; optional: when missing (and not root) their tests are skipped. The last
# six build HPN-SSH from the vendored source (scripts/build-hpnssh.sh).
TEST_PACKAGES := rsync iproute2 chromium dropbear-bin rclone lftp nftables tmux netcat-openbsd \
	autoconf automake gcc make libssl-dev zlib1g-dev

.PHONY: setup sysdeps bench examples lint test test-fast fuzz clean

sysdeps:
	@sh scripts/ensure-system-deps.sh

# uv installs the package and its dependencies in ~3 s where pip took ~31 s (a fresh clone's `make test`); pip
# where uv cannot be had.
$(BIN)/sshbench: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@{ $(BIN)/python -m pip install -q --disable-pip-version-check uv >/dev/null 2>&1 \
		&& $(BIN)/uv pip install -q --python $(BIN)/python -e '.[test]'; } \
		|| $(BIN)/python -m pip install -q --disable-pip-version-check -e '.[test]'
	@touch $@

setup: sysdeps $(BIN)/sshbench

bench: setup
	$(BIN)/sshbench run

# docs/examples/: each page's command run again, its output block rewritten (benchmarks, one after the other:
# ~12 min on 2 cores; the pages needing root are skipped without it). One page: make examples PAGE=03-zeros-to-disk
examples: setup
	$(BIN)/python scripts/examples.py $(PAGE)

# ruff (lint + format check), import-linter (stages import only downward), mypy on src/.
lint: $(BIN)/sshbench
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

test: setup
	@SSHBENCH_EXTRA_PACKAGES="$(TEST_PACKAGES)" sh scripts/ensure-system-deps.sh
	@sh scripts/fetch-openssh10.sh >/dev/null  # OpenSSH 10.0 for tests/test_builds.py (cached; skipped when unreachable)
	@sh scripts/build-hpnssh.sh >/dev/null  # HPN-SSH for tests/test_hpn.py (cached: ~75 s once; skipped without a compiler)
	@# Every test but the timed ones on three workers over the two cores (most of these tests wait on an sshd, a
	@# namespace or Ansible: 209 and 222 s against 242 and 243 s with two, back to back), a test file per worker (a
	@# module's fixture is set up once), with `make lint` beside them (~7 s: none of these tests times anything;
	@# its output follows theirs, and either failing fails the target); then the timed ones (`timed`: they assert on rates, CPU or latency they measure)
	@# alone, one at a time, so that no other test shares their cores, with the `serial` ones (they leave a dead
	@# owner's namespace or quota group on purpose and assert what a sweep reports; any run on the other core sweeps
	@# it first). The slowest are listed: the suite must stay under 10 minutes.
	@lint_log=$$(mktemp); $(MAKE) --no-print-directory lint >"$$lint_log" 2>&1 & lint=$$!; \
		$(BIN)/python -m pytest -q -m "not timed and not serial" -n 3 --dist loadfile --durations=8; tests=$$?; \
		wait $$lint; linted=$$?; cat "$$lint_log"; rm -f "$$lint_log"; \
		[ $$tests -eq 0 ] && [ $$linted -eq 0 ]
	$(BIN)/python -m pytest -q -m "timed or serial" --durations=8

# The fast tier only: no sshd, namespace or sshbench process started (tests/conftest.py marks the others
# `e2e`); for the edit-test loop. `make test` runs both tiers.
test-fast: $(BIN)/sshbench
	$(BIN)/python -m pytest -q -m "not e2e" -n 2

# The property tests' search for new failing cases (`make test` runs them derandomized: tests/conftest.py): passes
# under hypothesis's `fuzz` profile for FUZZ_SECONDS; a case it finds becomes an @example in its test.
FUZZ_SECONDS ?= 300
fuzz: $(BIN)/sshbench
	$(BIN)/python scripts/fuzz.py --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
