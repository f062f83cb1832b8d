# Test suites are discovered by name, so each part of the tree adds its own
# files without touching this one:
#   tests/unit/test_*.c         Criterion unit tests (built with ASan+UBSan via `make test`)
#   tests/integration/test_*.py real binaries over HTTP, no Docker engine
#   tests/e2e/test_*.py         real binaries against dockerd + runsc
#   tests/stack/test_*.py       the compose stack built from the images (`make up` path)
#   tests/swarm/test_*.py       the Swarm stack (`make swarm-up` path) on a single-node swarm
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

# libFuzzer targets: clang, ASan+UBSan, run for FUZZ_SECONDS each.
FUZZ_BUILD := build/fuzz
FUZZ_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz: deps
	$(MAKE) CC=clang BUILD=$(FUZZ_BUILD) SANFLAGS="$(FUZZ_FLAGS)" fuzz-bins
	tests/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
$(BUILD)/fuzz/%: tests/fuzz/%.c $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< -o $@ $(ALL_LDFLAGS) -fsanitize=fuzzer $(ALL_LIBS) $(LIBS)
fuzz-bins: $(FUZZ_BINS)
.PHONY: fuzz-bins
