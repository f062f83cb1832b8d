# console: the operator console's page, built on the host (npm is not in the
# images' build): `npm ci` installs the pinned packages of
# console/package-lock.json (integrity-checked), esbuild bundles src/ into
# build/console/, which the gateway image copies and the gateway serves at
# /console/ (console_dir). The browser tests' driver (playwright-core) is in
# the same lock file.
CONSOLE_SRCS := $(wildcard console/src/*) console/build.mjs
CONSOLE_STAMP := build/console/index.html
console/node_modules/.package-lock.json: console/package.json console/package-lock.json
	cd console && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
$(CONSOLE_STAMP): console/node_modules/.package-lock.json $(CONSOLE_SRCS)
	cd console && node build.mjs ../build/console
console: $(CONSOLE_STAMP)
.PHONY: console
