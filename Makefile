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

install: build
	cmake --install build --prefix $(PREFIX)

clean:
	rm -rf build build-asan
