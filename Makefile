# Two entry points for a fresh machine (see README.md):
#   make run   install what is missing, build, print the plan of the built-in default scenario
#   make test  the same set-up, then the whole CTest suite
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build run test bench clean
all: build

deps:
	@tools/install-deps.sh
	@test -d tests/browser/node_modules/playwright-core || (cd tests/browser && npm ci --no-audit --no-fund)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/shardplan plan

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Speed figures quoted in README.md (Google Benchmark; not part of the test suite).
bench: build
	$(BUILD)/shardplan_bench --benchmark_counters_tabular=true

clean:
	rm -rf $(BUILD)
