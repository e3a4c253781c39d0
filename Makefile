# One command builds the book (`make book`), one runs every test (`make test`).
# Both create .venv and install requirements.txt when needed; only python3,
# make and git are assumed.

PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
JB      := $(VENV)/bin/jupyter-book
MATHJAX := _static/mathjax/tex-chtml.js
NOTEBOOKS := $(sort $(wildcard book/*.ipynb))
BUILD_FLAGS := -W -n --keep-going --all

.PHONY: all book test unit notebooks execute lab clean help bench

all: book

help:
	@echo "make book     build the HTML book into _build/html (strict: -W -n)"
	@echo "make test     unit tests + strict nbval over every notebook + strict book build"
	@echo "make execute  re-execute every notebook in place (refreshes stored outputs)"
	@echo "make lab      JupyterLab on book/ in the project environment"
	@echo "make clean    remove _build and the copied MathJax"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

# MathJax 3 (es5 tree of the django-static-mathjax wheel) copied into _static,
# so the built book typesets maths offline.
$(MATHJAX): $(STAMP)
	@rm -rf _static/mathjax
	@mkdir -p _static
	cp -r "$$($(PY) -c 'import mathjax, os; print(os.path.join(os.path.dirname(mathjax.__file__), "static", "mathjax", "es5"))')" _static/mathjax
	@touch $(MATHJAX)

book: $(STAMP) $(MATHJAX)
	$(JB) build . $(BUILD_FLAGS)

# One pytest run: the package's unit tests and strict nbval over every notebook;
# then the strict book build.
test: $(STAMP) $(MATHJAX)
	$(VENV)/bin/ruff check src tests benchmarks
	$(PY) -m pytest tests $(NOTEBOOKS) --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg --timeout=600 -p no:cacheprovider
	$(JB) build . $(BUILD_FLAGS)

unit: $(STAMP)
	$(PY) -m pytest tests -q

# Re-execute every notebook top to bottom in a fresh kernel: the only way
# stored outputs are refreshed.
execute: $(STAMP)
	$(PY) -m jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=600 \
		--NotebookClient.record_timing=False $(NOTEBOOKS)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=book

clean:
	rm -rf _build _static/mathjax

# Throughput of every form against a plain matmul of the same FLOP count (2 threads).
bench: $(STAMP)
	OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 $(PY) benchmarks/bench.py --threads 2
