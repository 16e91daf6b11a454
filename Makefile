# mssql-cdc: the two set-up commands of README.md and a few conveniences.
# The build itself is CMake (docs/decisions/0001-build-with-cmake-and-ctest.md).
PREFIX ?= /usr/local
JOBS   ?= $(shell nproc)

.PHONY: all build demo test install clean

all: build

build:
	./scripts/install-deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build build -j $(JOBS)

# The main job: install what is missing, build, run the demo.
demo: build
	./scripts/demo

# Every test: normal build, then sanitizers and fuzzers (scripts/test).
test:
	./scripts/test

# The binary, libmcdc.a, its headers, mcdc.pc and the man page mssql-cdc.1.
install: build
	cmake -S . -B build -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --install build

clean:
	rm -rf build build-asan
