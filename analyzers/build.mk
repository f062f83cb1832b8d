# Grammars: fetched with npm pack, verified against pinned integrity hashes,
# compiled from their generated parser.c + scanner.c (ABI 14).
TS_PYTHON_VERSION := 0.23.6
TS_PYTHON_INTEGRITY := sha512-yIM9z0oxKIxT7bAtPOhgoVl6gTXlmlIhue7liFT4oBPF/lha7Ha4dQBS82Av6hMMRZoVnFJI8M6mL+SwWoLD3A==
TS_JAVASCRIPT_VERSION := 0.23.1
TS_JAVASCRIPT_INTEGRITY := sha512-/bnhbrTD9frUYHQTiYnPcxyHORIw157ERBa6dqzaKxvR/x3PC4Yzd+D1pZIMS6zNg2v3a8BZ0oK7jHqsQo9fWA==

$(GRAMMARS)/tree-sitter-python/src/parser.c:
	analyzers/fetch-grammar.sh tree-sitter-python $(TS_PYTHON_VERSION) $(TS_PYTHON_INTEGRITY) $(GRAMMARS)
$(GRAMMARS)/tree-sitter-javascript/src/parser.c:
	analyzers/fetch-grammar.sh tree-sitter-javascript $(TS_JAVASCRIPT_VERSION) $(TS_JAVASCRIPT_INTEGRITY) $(GRAMMARS)
$(GRAMMARS)/%/src/scanner.c: $(GRAMMARS)/%/src/parser.c
	@test -f $@
# Without this, a build that fetches the grammars treats scanner.c as an
# intermediate file of the chain above and deletes it when it finishes.
.PRECIOUS: $(GRAMMARS)/%/src/scanner.c

GRAMMAR_OBJS := $(BUILD)/grammar/python-parser.o $(BUILD)/grammar/python-scanner.o \
                $(BUILD)/grammar/javascript-parser.o $(BUILD)/grammar/javascript-scanner.o
# Generated third-party code: compiled without our warning set. The
# external scanners allocate through tree-sitter's allocator (array.h with
# TREE_SITTER_REUSE_ALLOCATOR) and through analyzers/ts/ts_alloc.c for their own
# calloc/free, so an abandoned parse frees their blocks too (ts/ts_alloc.h).
GRAMMAR_CFLAGS = -std=c11 -O2 -g -fPIE $(SANFLAGS) -w -DTREE_SITTER_REUSE_ALLOCATOR \
                 -Dcalloc=sg_grammar_calloc -Dfree=sg_grammar_free
$(BUILD)/grammar/%-parser.o: $(GRAMMARS)/tree-sitter-%/src/parser.c
	@mkdir -p $(dir $@)
	$(CC) $(GRAMMAR_CFLAGS) -I$(GRAMMARS)/tree-sitter-$*/src -c $< -o $@
$(BUILD)/grammar/%-scanner.o: $(GRAMMARS)/tree-sitter-%/src/scanner.c
	@mkdir -p $(dir $@)
	$(CC) $(GRAMMAR_CFLAGS) -I$(GRAMMARS)/tree-sitter-$*/src -c $< -o $@

grammars: $(GRAMMARS)/tree-sitter-python/src/parser.c $(GRAMMARS)/tree-sitter-javascript/src/parser.c
.PHONY: grammars

# Include paths by layer (the dependency rule, analyzers/README.md):
#   core (this folder)   common + itself; knows no language
#   analyze.c            + python/ and javascript/ (the language table)
#   ts/                  common + core + itself
#   python/, javascript/ common + core + ts/ + itself, never each other;
#                        SG_LAYER_LANGUAGE makes analyze.h refuse them
#   cli/                 common + core + itself
AN_INC_CORE := -Icommon -Ianalyzers
$(BUILD)/obj/analyzers/%.o: LAYER_INC = $(AN_INC_CORE)
$(BUILD)/obj/analyzers/analyze.o: LAYER_INC = $(AN_INC_CORE) -Ianalyzers/python -Ianalyzers/javascript
$(BUILD)/obj/analyzers/ts/%.o: LAYER_INC = $(AN_INC_CORE) -Ianalyzers/ts -DSG_LAYER_LANGUAGE
$(BUILD)/obj/analyzers/python/%.o: LAYER_INC = $(AN_INC_CORE) -Ianalyzers/ts -Ianalyzers/python \
                                               -DSG_LAYER_LANGUAGE
$(BUILD)/obj/analyzers/javascript/%.o: LAYER_INC = $(AN_INC_CORE) -Ianalyzers/ts \
                                                   -Ianalyzers/javascript -DSG_LAYER_LANGUAGE
$(BUILD)/obj/analyzers/cli/%.o: LAYER_INC = $(AN_INC_CORE) -Ianalyzers/cli

# The analyzer core: violations, policies, canonicalisation, the pipeline.
ANALYZER_SRCS += analyzers/violation.c analyzers/strset.c \
                 analyzers/policy.c analyzers/policy_runtime.c analyzers/policy_set.c \
                 analyzers/canon.c \
                 analyzers/analyze.c analyzers/verdict_cache.c analyzers/imports.c
# Shared tree-sitter helpers and the bump arena the language analyzers use.
ANALYZER_SRCS += analyzers/ts/ts_util.c analyzers/ts/ts_bound.c analyzers/ts/ts_alloc.c \
                 analyzers/python/arena.c
# The language analyzers; each one's modules are named after it.
ANALYZER_SRCS += analyzers/python/python.c $(wildcard analyzers/python/python_*.c)
ANALYZER_SRCS += analyzers/javascript/javascript.c $(wildcard analyzers/javascript/js_*.c)

# sandgate-check: the analyzer as a command-line tool (CLI-only objects stay
# out of the library).
CHECK_SRCS := analyzers/cli/check_main.c analyzers/cli/check_report.c analyzers/cli/check_modules.c
BINS += $(BUILD)/sandgate-check
$(BUILD)/sandgate-check: $(call objs,$(CHECK_SRCS)) $(LIB_ANALYZERS) $(LIB_COMMON)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(ALL_LDFLAGS) $(LIBS)
