# mssql-cdc: conveniences for those who have make. Nothing depends on this file: the
# README's commands are ./scripts/demo and ./scripts/test, which need only bash.
# The build itself is CMake (docs/decisions/0001-build-with-cmake-and-ctest.md).
PREFIX ?= /usr/local

.PHONY: all build demo test install clean

all: build

build:
	./scripts/build

demo:
	./scripts/demo

test:
	./scripts/test

# The binary, libmcdc.a, its headers, mcdc.pc and the man page mssql-cdc.1.
install: build
	cmake --install build --prefix $(PREFIX)

clean:
	rm -rf build build-asan
