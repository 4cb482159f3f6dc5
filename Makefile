# Two entry points for a fresh machine (see README.md):
#   make run   install what is missing, build, print the plan of the built-in default scenario
#   make test  the same set-up, then the whole CTest suite
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build run test bench sanitize fuzz load clean site
all: build

deps:
	@tools/install-deps.sh
	@test -d tests/browser/node_modules/playwright-core || (cd tests/browser && npm ci --no-audit --no-fund)

# Configured once; a configure that failed half-way (a cache but no build files, e.g. run before the
# packages were installed) is configured again rather than left to fail in cmake --build.
build: deps
	@test -f $(BUILD)/Makefile || test -f $(BUILD)/build.ninja || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/shardplan plan

test: build site
	cd $(BUILD) && SHARDPLAN_SITE_DIR=$(CURDIR)/build-site/site ctest --output-on-failure -j $(JOBS)

# The planner page as a static site: the library compiled to WebAssembly with Debian's emscripten, in
# build-site/site (serve it with any static file server). NODE_PATH: emscripten's JS optimizer needs
# Debian's node-acorn, which a Node.js from another source does not look for.
site: deps
	NODE_PATH=/usr/share/nodejs emcmake cmake -S . -B build-site -DCMAKE_BUILD_TYPE=Release -DSHARDPLAN_SITE=ON
	NODE_PATH=/usr/share/nodejs cmake --build build-site -j $(JOBS)

# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer (CI runs it).
sanitize: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDPLAN_SANITIZE=ON -DSHARDPLAN_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# libFuzzer on the JSON readers, the Hugging Face import, the API handler at its production limits, the
# HTTP server over a socket and the command line, FUZZ_SECONDS each (CI: 60). New inputs go to
# build-fuzz/corpus-*; a crash leaves build-fuzz/crash-* and fails.
FUZZ_SECONDS ?= 60
fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DSHARDPLAN_FUZZ=ON
	cmake --build build-fuzz -j $(JOBS) --target fuzz_case fuzz_hf fuzz_api fuzz_import fuzz_http fuzz_cli
	@for t in case hf api import http cli; do \
	  mkdir -p build-fuzz/corpus-$$t; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
	  build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=60 -rss_limit_mb=2048 -max_len=1048576 \
	    -print_final_stats=1 -artifact_prefix=build-fuzz/crash-$$t- build-fuzz/corpus-$$t fuzz/corpus/$$t \
	    2>build-fuzz/fuzz-$$t.log || { tail -40 build-fuzz/fuzz-$$t.log; exit 1; }; \
	  grep -E "stat::number_of_executed_units|Done" build-fuzz/fuzz-$$t.log | tail -2; \
	done

# Load on /api/plan: 64 connections for 30 s on loopback (wrk); prints requests/s, p99 and errors.
load: build
	tools/load.sh

# Speed figures quoted in README.md (Google Benchmark; not part of the test suite).
bench: build
	$(BUILD)/shardplan_bench --benchmark_counters_tabular=true

clean:
	rm -rf $(BUILD) build-asan build-fuzz
