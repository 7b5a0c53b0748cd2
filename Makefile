# Thin wrapper over CMake: the README's two commands.
#   make tune   installs what is missing, builds, and runs the default tuning sweep
#   make test   installs what is missing, builds, and runs the tests (GPU tests skip without a GPU)
BUILD ?= build
SPACE ?= tuner/spaces/default.lua
JOBS ?= $(shell nproc)
export PATH := $(PATH):/usr/local/cuda/bin

.PHONY: all deps build test tune clean

all: build

deps:
	@scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

tune: build
	$(BUILD)/tuner/flashtune tune $(SPACE)

clean:
	rm -rf $(BUILD)
