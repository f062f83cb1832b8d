# Benchmarks: bench/bench_*.c are built against the release libraries; `make
# bench` runs every executable bench/run-*.sh in name order. Each script prints
# its figures (medians and ratios) and fails only when it cannot measure; a
# failed script does not stop the others. Each appends its headline figures to
# $BENCH_SUMMARY (bench/lib.sh bench_summary) and bench/summary.py ends the run
# with one table of them, the machine and its load stated once, printed and
# written to $(BENCH_OUT)/summary.md; `make bench` fails if a script did.
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
$(BUILD)/bench/%: bench/%.c $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< -o $@ $(ALL_LDFLAGS) $(ALL_LIBS) $(LIBS)
bench-bins: $(BINS) $(BENCH_BINS)
BENCH_OUT := build/bench
bench: deps
	$(MAKE) bench-bins
	@mkdir -p $(BENCH_OUT); export BENCH_SUMMARY=$$PWD/$(BENCH_OUT)/rows.md; : >"$$BENCH_SUMMARY"; \
	load0=$$(cut -d' ' -f1-3 /proc/loadavg); t0=$$(date +%s); failed=; \
	for s in bench/run-*.sh; do [ -x "$$s" ] || continue; echo "== $$s"; \
	    "$$s" || { echo "== $$s FAILED"; failed="$$failed $${s#bench/}"; }; done; \
	echo "== summary"; python3 bench/summary.py "$$BENCH_SUMMARY" --load-start "$$load0" \
	    --load-end "$$(cut -d' ' -f1-3 /proc/loadavg)" --seconds $$(( $$(date +%s) - t0 )) \
	    --failed "$$failed" --out $(BENCH_OUT)/summary.md
.PHONY: bench bench-bins
