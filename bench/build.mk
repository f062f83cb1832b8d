# Benchmarks: bench/bench_*.c are built against the release libraries; `make
# bench` runs every executable bench/run-*.sh in name order. Each script prints
# its figures (medians and ratios) and fails only when it cannot measure.
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
$(BUILD)/bench/%: bench/%.c $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(ALL_LIBS) $(LIBS)
bench-bins: $(BINS) $(BENCH_BINS)
bench: deps
	$(MAKE) bench-bins
	@set -e; for s in bench/run-*.sh; do [ -x "$$s" ] || continue; echo "== $$s"; "$$s"; done
.PHONY: bench bench-bins
