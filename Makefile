# The two set-up commands of the README: `make lab` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LAB_HOST := 127.0.0.1
LAB_PORT ?= 8888
FIRST_NOTEBOOK := notebooks/00_tour.ipynb
# Jupyter refuses to run as root (containers, CI) unless told to.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
# Stored outputs are always produced on the CPU so that nbval compares like with like.
EXEC_ENV := NBHELPERS_DEVICE=cpu PYTHONHASHSEED=0 MPLBACKEND=Agg
# ... and with torch's portable (non-vectorised) kernels on one thread, which no learner's
# machine runs by default: `make nbval` then checks them with the native kernels and several
# threads, so every run on an AVX2 or AVX-512 machine compares across kernels (README).
PORTABLE_ENV := $(EXEC_ENV) ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1

.PHONY: lab lab-ja test check unit nbval lint browser notebooks course-model deep-model \
	fine-tuning-curves fine-tuning-claims \
	benchmarks \
	gpu-check clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# Re-runs only when the requirements change, so a second `make test` skips the installs.
$(STAMP): $(VENV)/bin/python requirements.txt requirements-dev.txt pyproject.toml \
		scripts/install_torch.sh jupyter/overrides.json
	scripts/install_torch.sh $(PY)
	$(PY) -m pip install --progress-bar off -r requirements-dev.txt -e .
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (course)" >/dev/null
	# The course works offline: JupyterLab neither checks for updates nor asks to fetch news.
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $(STAMP)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --ServerApp.ip=$(LAB_HOST) --ServerApp.port=$(LAB_PORT) \
		--LabApp.extension_manager=readonly $(ALLOW_ROOT) $(FIRST_NOTEBOOK)

# The Japanese edition: its tour, with every kernel's figures and messages in Japanese.
lab-ja: $(STAMP)
	NBHELPERS_LANG=ja $(VENV)/bin/jupyter lab --ServerApp.ip=$(LAB_HOST) \
		--ServerApp.port=$(LAB_PORT) --LabApp.extension_manager=readonly $(ALLOW_ROOT) \
		notebooks/ja/00_tour.ipynb

# Everything: lint, the unit tests, nbval (each notebook, then its Japanese edition, in one
# kernel, offline; one
# notebook per core at a time), the
# browser tests (skipped, with one line saying why, where no Chromium or Chrome is found).
test: $(STAMP)
	@start=$$(date +%s); status=0; \
	for tier in lint unit nbval browser; do \
		begun=$$(date +%s); \
		$(MAKE) --no-print-directory $$tier || status=$$?; \
		echo "make test: $$tier $$(( $$(date +%s) - begun )) s"; \
		[ $$status = 0 ] || break; \
	done; \
	echo "make test: $$(( $$(date +%s) - start )) s"; exit $$status

# The inner loop: lint and the tests that execute no notebook and drive no browser.
check: $(STAMP)
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory lint && \
	$(EXEC_ENV) OMP_NUM_THREADS=1 $(PY) -m pytest tests -m "not slow" -q -n auto --dist worksteal -p no:nbval \
		--ignore=tests/browser; status=$$?; \
	echo "make check: $$(( $$(date +%s) - start )) s"; exit $$status

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# One torch thread per test process: pytest-xdist already runs one process per core.
unit: $(STAMP)
	$(EXEC_ENV) OMP_NUM_THREADS=1 $(PY) -m pytest tests --ignore=tests/browser -q -n auto \
		--dist worksteal

# One thread per kernel: two workers' kernels on two cores each with two threads wait on
# each other's spinning threads, and nbval took twice as long (192 s against 368-432 s).
nbval: $(STAMP)
	$(EXEC_ENV) OMP_NUM_THREADS=1 $(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval.cfg \
		--rerun-offline notebooks solutions -q -n auto --dist loadfile \
		--no-loadscope-reorder

# Two workers, each with its own JupyterLab and Chromium: one page waits for its kernel while
# the other runs. -rP prints what each test measured (pytest-xdist does not pass -s through);
# the latencies are reported, not asserted, and benchmarks/bench_browser.py measures them
# one test at a time.
browser: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest tests/browser -q -rsP -n 2 --dist worksteal

# Re-execute every notebook (and solution) in place, in a fresh kernel, on the CPU: run before
# committing.
notebooks: $(STAMP)
	$(PORTABLE_ENV) $(PY) scripts/execute_notebooks.py notebooks/*.ipynb solutions/*.ipynb \
		notebooks/ja/*.ipynb solutions/ja/*.ipynb

# Notebook 08's training run, stored for notebooks 08-10 (scripts/save_course_model.py).
course-model: $(STAMP)
	$(PORTABLE_ENV) $(PY) scripts/save_course_model.py

# The same recipe with 4 blocks, for notebook 11's layers-transferred curve.
deep-model: $(STAMP)
	$(PORTABLE_ENV) $(PY) scripts/save_course_model.py deep

# Notebook 11's fine-tuning curves, stored for it to plot (scripts/save_fine_tuning_curves.py).
fine-tuning-curves: $(STAMP)
	$(EXEC_ENV) OMP_NUM_THREADS=1 $(PY) scripts/save_fine_tuning_curves.py

# What notebook 11 shows of fine-tuning past the curves (scripts/save_fine_tuning_claims.py).
fine-tuning-claims: $(STAMP)
	$(EXEC_ENV) OMP_NUM_THREADS=1 $(PY) scripts/save_fine_tuning_claims.py

# Every benchmark, each writing its figures to benchmarks/results/NAME.json, then the README's
# performance table made from them (scripts/performance_table.py). Run on an idle machine.
benchmarks: $(STAMP)
	@for b in benchmarks/bench_*.py; do \
		name=$$(basename $$b .py); echo "== $$b"; \
		$(EXEC_ENV) PYTHONPATH=scripts $(PY) $$b --json benchmarks/results/$${name#bench_}.json || exit 1; \
	done
	$(PY) scripts/performance_table.py --write

# For a machine with CUDA: every notebook executed with NBHELPERS_DEVICE=cuda (copies in a
# temp dir, the stored CPU outputs untouched), each banner must report cuda; then the
# attention benchmark on the GPU.
gpu-check: $(STAMP)
	PYTHONHASHSEED=0 MPLBACKEND=Agg $(PY) scripts/gpu_check.py

clean:
	rm -rf $(VENV)
