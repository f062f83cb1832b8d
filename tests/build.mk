# Test suites are discovered by name, so each part of the tree adds its own
# files without touching this one:
#   tests/unit/test_*.c         Criterion unit tests (built with ASan+UBSan via `make test`)
#   tests/integration/test_*.py real binaries over HTTP, no Docker engine
#   tests/e2e/test_*.py         real binaries against dockerd + runsc
#   tests/stack/test_*.py       the compose stack built from the images (`make up` path)
#   tests/fuzz/fuzz_*.c         libFuzzer targets (`make fuzz`, clang)
NPROC := $(shell nproc 2>/dev/null || echo 2)
UNIT_TESTS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_TESTS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SECONDS ?= 30

$(BUILD)/tests/%: tests/unit/%.c $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit $< -o $@ $(ALL_LDFLAGS) $(ALL_LIBS) $(LIBS) $(TEST_LIBS)

test-bins: $(BINS) $(UNIT_BINS)
.PHONY: test-bins unit test-suites

# Unit tests alone (fast loop while developing).
unit:
	$(MAKE) -j$(NPROC) SAN=1 test-bins
	tests/run-suites.sh unit

# Everything: dependencies, sanitizer build, images, every suite. README's test command.
test: deps
	$(MAKE) -j$(NPROC) SAN=1 test-bins
	$(MAKE) -j$(NPROC) all
	tests/run-suites.sh all

# libFuzzer targets: clang, ASan+UBSan. `make fuzz` runs each for FUZZ_SECONDS
# and the differential fuzzers for DIFF_SECONDS; `make fuzz-smoke` is the CI
# step (build everything, a few seconds each); `make fuzz-long` is for a night.
# tests/README.md (Fuzzing) says what each does.
FUZZ_BUILD := build/fuzz
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_MAKE = $(MAKE) -j$(NPROC) CC=clang BUILD=$(FUZZ_BUILD) SANFLAGS="$(FUZZ_FLAGS)"
DIFF_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 3
FUZZ_LONG_SECONDS ?= 3600
fuzz: deps
	$(FUZZ_MAKE) fuzz-bins
	tests/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)
	tests/run-fuzz-diff.sh $(FUZZ_BUILD) $(DIFF_SECONDS)
fuzz-smoke:
	$(FUZZ_MAKE) fuzz-bins
	tests/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SMOKE_SECONDS)
fuzz-diff:
	$(FUZZ_MAKE) fuzz-bins
	tests/run-fuzz-diff.sh $(FUZZ_BUILD) $(DIFF_SECONDS)
fuzz-long:
	$(FUZZ_MAKE) fuzz-bins
	tests/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_LONG_SECONDS) fuzz_analyze_python fuzz_analyze_javascript
	tests/run-fuzz-diff.sh $(FUZZ_BUILD) $(FUZZ_LONG_SECONDS)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
DIFF_SRCS := $(wildcard tests/fuzz/diff/diff_*.c)
DIFF_BINS := $(patsubst tests/fuzz/diff/%.c,$(BUILD)/fuzz/%,$(DIFF_SRCS))
$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_analyze_common.h $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< -o $@ $(ALL_LDFLAGS) -fsanitize=fuzzer $(ALL_LIBS) $(LIBS)
$(BUILD)/fuzz/diff_%: tests/fuzz/diff/diff_%.c tests/fuzz/diff/diff_common.h $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< -o $@ $(ALL_LDFLAGS) -fsanitize=fuzzer $(ALL_LIBS) $(LIBS)
fuzz-bins: $(FUZZ_BINS) $(DIFF_BINS)
.PHONY: fuzz-bins fuzz-smoke fuzz-diff fuzz-long
