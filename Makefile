# The two set-up commands (see README.md): `make run` and `make test`.
# Everything else here is a convenience on top of CMake presets.
JOBS ?= $(shell nproc)
WEIR := build/default/tools/weir/weir
SHARED ?= ../shared

.PHONY: deps build run test test-asan test-release clang conformance bench fuzz install-test clean

deps:
	@tools/install-deps.sh

build: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default -j $(JOBS)

run: build
	$(WEIR) lab --out build/lab

test: build
	ctest --preset default -j $(JOBS)

test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

clang: deps
	@cmake --preset clang >/dev/null
	@cmake --build --preset clang -j $(JOBS)

conformance: build
	$(WEIR) pkt --all-ip-versions --summary-by-folder $(SHARED)/packetdrill/gtests-tcp

# Benchmarks run from the release preset (-O3, link-time optimisation);
# only the bench_* binaries are built there (an LTO link of every test
# binary takes long on two cores; `make test-release` does that).
BENCHES := $(basename $(notdir $(wildcard bench/bench_*.cc)))
bench: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS) --target $(BENCHES)
	@for b in $(BENCHES); do build/release/bench/$$b; done

# The whole suite on the release preset's build (what the benchmarks measure).
test-release: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)
	ctest --preset release -j $(JOBS)

# Every fuzz target in turn for FUZZ_SECONDS each, from its seed corpus
# (fuzz/corpus/<name>); new inputs and crash files stay under build/fuzz/.
FUZZ_SECONDS ?= 10
fuzz: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)
	@for f in build/fuzz/fuzz/fuzz_*; do [ -f $$f -a -x $$f ] || continue; n=$$(basename $$f); c=$${n#fuzz_}; \
	  mkdir -p build/fuzz/corpus-$$c build/fuzz/artifacts; echo "== $$n ($(FUZZ_SECONDS) s)"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/artifacts/$$c- build/fuzz/corpus-$$c fuzz/corpus/$$c || exit 1; done

clean:
	rm -rf build
