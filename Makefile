# Thin wrapper over CMake: the README's two commands.
#   make tune   installs what is missing, builds, and runs the default tuning sweep (BUDGET=15m
#               bounds it: flashtune tune --budget; a rerun resumes)
#   make test   installs what is missing, builds, and runs every test (test_gen_full included);
#               GPU tests skip without a GPU, and the summary ends with why each skipped
BUILD ?= build
SPACE ?= tuner/spaces/default.lua
BUDGET ?=
JOBS ?= $(shell nproc)
export PATH := $(PATH):/usr/local/cuda/bin

.PHONY: all deps build test tune clean

all: build

deps:
	@scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

# ctest's summary says only "(Skipped)": scripts/ctest-skips.sh prints each skipped test's reason
# from ctest's JUnit file. The exit status stays ctest's.
JUNIT = $(abspath $(BUILD))/Testing/ctest-junit.xml
test: build
	cd $(BUILD) && { ctest --output-on-failure -j $(JOBS) --output-junit $(JUNIT) $(CTEST_ARGS); rc=$$?; \
	  $(CURDIR)/scripts/ctest-skips.sh $(JUNIT); exit $$rc; }

tune: build
	$(BUILD)/tuner/flashtune tune $(if $(BUDGET),--budget $(BUDGET)) $(SPACE)

clean:
	rm -rf $(BUILD)
