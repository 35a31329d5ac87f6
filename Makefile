# parsolve: `make setup` once on a fresh Debian machine, then `make test`; `make demo` runs an example.
SHELL := /bin/bash
VENV  ?= .venv
PY    := $(VENV)/bin/python
NP    ?= 2
MPIRUN := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun
APT_PACKAGES := openmpi-bin libopenmpi-dev python3-dev python3-venv python3-numpy python3-mpi4py \
	python3-petsc4py python3-h5py-mpi cython3 python3-setuptools python3-pytest python3-pytest-mpi \
	python3-hypothesis python3-matplotlib build-essential libegl1 libegl-mesa0 libgl1-mesa-dri
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: setup system venv build test test-serial test-mpi demo bench clean

setup: system venv build

system:
	@if dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then echo "system packages: present"; else \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); fi

venv:
	@[ -x $(PY) ] || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q --no-build-isolation --no-deps -e .
	@# the extra `render` (VTK's wheel: its XDMF reader tests the ParaView index, and it draws
	@# `parsolve render`; offscreen through Mesa's EGL, no display needed). A system VTK older
	@# than 9.3 (Debian's python3-vtk9, which some packages pull in) renders through X only.
	@$(PY) -c "import vtk, vtkmodules.vtkIOXdmf2, sys; \
	  sys.exit(tuple(map(int, vtk.__version__.split('.')[:2])) < (9, 3))" 2>/dev/null || \
	  $(PY) -m pip install -q "vtk>=9.3"

build:
	@log=$$(mktemp); $(PY) setup.py -q build_ext --inplace > $$log 2>&1; status=$$?; \
	  grep -vE 'FutureWarning|obj = getattr|hasattr\(numpy|_BetaConfiguration|warnings.warn' $$log; rm -f $$log; \
	  if [ $$status -ne 0 ]; then echo "build: a kernel did not compile (above)"; exit $$status; fi
	@$(PY) -c "import importlib, os; [importlib.import_module('parsolve._kernels.' + f[:-4]) for f in sorted(os.listdir('kernels')) if f.endswith('.pyx') and f != 'halo.pyx']; print('kernels: compiled')"

test: test-serial test-mpi

test-serial:
	$(PY) -m pytest -q -p no:cacheprovider tests --ignore=tests/mpi

test-mpi:
	$(MPIRUN) -n 2 $(PY) -m pytest -q -p no:cacheprovider --with-mpi tests/mpi
	$(MPIRUN) -n 3 $(PY) -m pytest -q -p no:cacheprovider --with-mpi tests/mpi
	$(MPIRUN) -n 4 $(PY) -m pytest -q -p no:cacheprovider --with-mpi tests/mpi

demo:
	$(VENV)/bin/parsolve run examples/pour.py --output out/pour.h5
	$(VENV)/bin/parsolve info out/pour.h5

bench:
	$(PY) bench/run_all.py

clean:
	rm -rf build parsolve/_kernels/*.so kernels/*.c out bench/results .pytest_cache
