# sandgate build. `make` builds everything, `make test` runs every suite,
# `make up` brings the stack up. See README.md.
#
# Flavours: the default build goes to build/rel; SAN=1 builds with
# ASan+UBSan into build/asan (the unit and end-to-end suites use it).
# Each part of the tree adds its sources and targets in its own build.mk.

SHELL := /bin/bash
.DEFAULT_GOAL := all

CC ?= cc
SAN ?= 0
ifeq ($(SAN),1)
  BUILD := build/asan
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
  BUILD ?= build/rel
  SANFLAGS ?= -D_FORTIFY_SOURCE=2
endif
GRAMMARS := build/grammars

PKGS := tree-sitter libmicrohttpd libcurl jansson libcrypto sqlite3
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wpointer-arith -Wformat=2 -Wvla -Wundef -Wcast-qual -Wwrite-strings
CFLAGS ?= -O2 -g
# Include paths are per layer, so a file can include only what its layer may
# use and a forbidden include fails to compile. Each build.mk sets LAYER_INC
# for its objects (a pattern-specific variable); tests, fuzz targets and
# benchmarks keep this default and may include anything. The layers, never
# upward: sandgate-check -> analyze -> {python, javascript} -> {ts, analyzer
# core} -> common; gateway -> its front doors -> its core (admission) ->
# analyzer core + common (gateway/build.mk); executors -> common
# (analyzers/README.md, "Dependency rule").
INC_ALL := -I. -Icommon -Ianalyzers -Ianalyzers/ts -Ianalyzers/python -Ianalyzers/javascript \
           -Ianalyzers/cli -Igateway -Igateway/core -Igateway/console -Igateway/doors/jobs \
           -Igateway/doors/sessions -Igateway/doors/mcp -Igateway/doors/dify -Iexecutors
LAYER_INC = $(INC_ALL)
ALL_CFLAGS = -std=c17 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -fstack-protector-strong \
             -fPIE $(LAYER_INC) \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS ?=
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS) -pie -Wl,-z,relro,-z,now
LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lunistring -lpthread -lm
TEST_LIBS = -lcriterion

# Libraries: each daemon's code minus main.c, so unit tests can link it.
LIB_COMMON := $(BUILD)/libsgcommon.a
LIB_ANALYZERS := $(BUILD)/libsganalyzers.a
LIB_GATEWAY := $(BUILD)/libsggateway.a
LIB_EXECUTOR := $(BUILD)/libsgexecutor.a
ALL_LIBS := $(LIB_GATEWAY) $(LIB_EXECUTOR) $(LIB_ANALYZERS) $(LIB_COMMON)
objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

# Filled in by the build.mk files.
COMMON_SRCS :=
ANALYZER_SRCS :=
GATEWAY_SRCS :=
EXECUTOR_SRCS :=
BINS :=
UNIT_TESTS :=

include common/build.mk
include analyzers/build.mk
include gateway/build.mk
include executors/build.mk
include images/build.mk
# deploy/ is not in the daemon images' build context: optional there.
-include deploy/build.mk
include tests/build.mk
include bench/build.mk
# console/ is not in the images' build context: optional there.
-include console/build.mk

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@


$(LIB_COMMON): $(call objs,$(COMMON_SRCS))
$(LIB_ANALYZERS): $(call objs,$(ANALYZER_SRCS)) $(GRAMMAR_OBJS)
$(LIB_GATEWAY): $(call objs,$(GATEWAY_SRCS))
$(LIB_EXECUTOR): $(call objs,$(EXECUTOR_SRCS))
$(ALL_LIBS):
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

.PHONY: all deps test unit e2e fuzz bench clean up down reload demo images
all: $(BINS)

clean:
	rm -rf build/rel build/asan build/fuzz

# Header dependencies of every flavour, the fuzz build (BUILD=build/fuzz) too:
# without them an object built against an older struct layout is linked as is.
-include $(shell find build/rel/obj build/asan/obj $(BUILD)/obj -name '*.d' 2>/dev/null | sort -u)

# Debian packages the build, the tests and the stack need. `make deps` is
# idempotent: it installs only what is missing, then fetches the grammars.
DEB_DEPS := build-essential clang pkg-config libtree-sitter-dev libmicrohttpd-dev \
            libcurl4-openssl-dev libjansson-dev libcriterion-dev libunistring-dev libssl-dev libsqlite3-dev \
            python3 python3-venv openssl ca-certificates debootstrap docker.io runsc docker-compose \
            clang-format clang-tidy chromium chromium-driver
deps:
	@missing=$$(for p in $(DEB_DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
	    grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "deps: installing" $$missing; \
	    [ "$$(id -u)" = 0 ] || { echo "deps: run as root to install:" $$missing; exit 1; }; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v npm >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq npm; }
	@$(MAKE) --no-print-directory grammars

# Style: .clang-format and .clang-tidy at the top. The C we write; the
# grammars' generated parser and scanner live under build/ and are never
# listed. `make format` rewrites in place, `make format-check` only reports.
STYLE_DIRS := common analyzers gateway executors images tests bench
STYLE_SRCS = $(shell find $(STYLE_DIRS) -name '*.[ch]' -not -path '*/corpus/*' | sort)
# Lint the daemons', the CLI's and the runner's sources (headers through
# them; .clang-tidy's HeaderFilterRegex) with the build's language flags and
# every layer's include path: the per-layer paths are the compiler's check.
LINT_SRCS = $(shell find common analyzers gateway executors images/nodejs images/runtime -name '*.c' | sort)
LINT_FLAGS = -std=c17 -D_GNU_SOURCE $(INC_ALL) -Iimages/nodejs \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LINT_JOBS ?= 2
format:
	clang-format -i $(STYLE_SRCS)
format-check:
	@bad=$$(for f in $(STYLE_SRCS); do clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || \
	    echo "  $$f"; done); \
	if [ -n "$$bad" ]; then echo "format-check: not as .clang-format says (make format):"; \
	    echo "$$bad"; exit 1; fi
lint:
	@bad=$$(grep -rn 'ts_node_symbol(\|ts_node_type(' analyzers gateway executors common \
	    --include=*.c --include=*.h | grep -v '^analyzers/ts/ts_node.h:\|^analyzers/grammar'); \
	if [ -n "$$bad" ]; then echo "lint: the raw tree-sitter calls crash on a null node;" \
	    "use sg_ts_symbol/sg_ts_type (analyzers/ts/ts_node.h):"; echo "$$bad"; exit 1; fi
	@printf '%s\n' $(LINT_SRCS) | xargs -P$(LINT_JOBS) -n4 sh -c \
	    'clang-tidy --quiet "$$@" -- $(LINT_FLAGS) 2>/dev/null' lint
.PHONY: format format-check lint
