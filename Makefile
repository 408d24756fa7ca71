# cgkill: GNU make. make, make check, make demo, make bench, make fuzz,
# make install / make uninstall (PREFIX, DESTDIR, BINDIR, LIBDIR, INCLUDEDIR,
# MANDIR, PKGCONFIGDIR, BASHCOMPDIR, ZSHCOMPDIR, FISHCOMPDIR, DOCDIR,
# PKGDATADIR; the daemon's SBINDIR, SYSTEMDUNITDIR), make check-deb,
# make lint, make image (IMAGE). WERROR=1: warnings are errors (see WARN).
B ?= build
VERSION := $(shell sed -n 's/^\#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)
# The shared library: soname libcgkill.so.$(SOVERSION), which changes only
# when the ABI breaks; the real file is libcgkill.so.$(SOVERSION).MINOR.PATCH,
# MINOR and PATCH being the last two numbers of CGK_VERSION (version X.Y.Z:
# libcgkill.so.1.Y.Z), so that within one soname a newer release has the
# higher name.
SOVERSION := 1
LIBFILE := libcgkill.so.$(SOVERSION).$(word 2,$(subst ., ,$(VERSION))).$(word 3,$(subst ., ,$(VERSION)))

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DOCDIR ?= $(PREFIX)/share/doc/cgkill
PKGDATADIR ?= $(PREFIX)/share/cgkill

CC ?= cc
CFLAGS ?= -O2 -g
# Warnings are errors in development and CI builds only: WERROR=1 adds
# -Werror, and make check, check-asan and demo set it unless told otherwise
# (WERROR=0); a plain make or make install, as distributions build, does not,
# so that a new compiler's new warning does not break their builds.
WARN := -std=gnu11 -Wall -Wextra -Wshadow -Wformat=2 -Wno-format-nonliteral \
	-Wmissing-prototypes -Wstrict-prototypes -Wvla
WERROR ?= $(if $(filter check check-asan demo,$(MAKECMDGOALS)),1)
CPPFLAGS += -D_GNU_SOURCE -Iinclude -Ilib
ALL_CFLAGS = $(WARN) $(if $(filter 1,$(WERROR)),-Werror) $(CFLAGS) -fPIC -fvisibility=hidden

LIB_SRC := $(sort $(wildcard lib/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
TEST_SRC := $(sort $(wildcard tests/test-*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(B)/tests/%)
TEST_LIB_SRC := $(sort $(wildcard tests/support/*.c))
TEST_SH := $(sort $(wildcard tests/test-*.sh))
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz-*.c))

# The guard daemon (daemon/): its build rules, and DAEMON_BIN for all.
.DEFAULT_GOAL := all
-include daemon/daemon.mk
# make image (deploy/: the daemon's OCI image)
-include deploy/image.mk

all: $(B)/libcgkill.a $(B)/libcgkill.so $(B)/cgkill $(DAEMON_BIN)

# The compiler and flags a build directory was built with: when they change
# (WERROR, CFLAGS, CC), everything in it is rebuilt, so that an object built
# without -Werror cannot keep its warnings from make check.
BUILD_FLAGS = $(subst ','\'',$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS))
$(B)/flags: FORCE
	+@mkdir -p $(dir $@)
	+@printf '%s\n' '$(BUILD_FLAGS)' | cmp -s - $@ || printf '%s\n' '$(BUILD_FLAGS)' >$@
FORCE:

$(B)/%.o: %.c include/cgkill.h lib/internal.h $(wildcard tests/support/*.h) $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libcgkill.a: $(LIB_OBJ)
	rm -f $@; $(AR) rcs $@ $^

$(B)/libcgkill.so: $(LIB_OBJ) lib/libcgkill.map
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libcgkill.so.$(SOVERSION) \
		-Wl,--version-script=lib/libcgkill.map -o $@ $(LIB_OBJ)

# The command is linked statically (libc included): beside a fork bomb that
# shares libc, a dynamically linked program waits in its loader, for seconds
# to minutes, for libc's mapping (bench/RESULTS.md, "Stalls beside a bomb").
# CGKILL_LDFLAGS= links it dynamically (sanitizer builds do).
CGKILL_LDFLAGS ?= -static-pie
CLI_SRC := $(sort $(wildcard cli/*.c))
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
$(CLI_OBJ): cli/cli.h
# the public interface only: include/, not lib/ (tests/test-layers.sh)
$(CLI_OBJ): CPPFLAGS := $(filter-out -Ilib,$(CPPFLAGS))
$(B)/cgkill: $(CLI_OBJ) $(B)/libcgkill.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(CGKILL_LDFLAGS) -o $@ $^

# The library the test programs link; the autopkgtest (debian/tests) links
# the installed one instead.
TEST_LIBCGKILL ?= $(B)/libcgkill.a
$(B)/tests/%: $(B)/tests/%.o $(TEST_LIB_SRC:%.c=$(B)/%.o) $(TEST_LIBCGKILL)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ -lpthread

# The tests' workloads are not code under test: built without the
# sanitizers of check-asan, whose every fork of an ASan process copies its
# large mappings (a bomb of them at its pids.max starves the machine for
# minutes, failed forks copying memory just as well).
WORKLOAD_CFLAGS = $(WARN) $(if $(filter 1,$(WERROR)),-Werror) -O2 -g

# A program of its own, so a bomb's forks copy it and not a test binary.
$(B)/tests/forkbomb: tests/helper/forkbomb.c $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WORKLOAD_CFLAGS) -o $@ $<

# What the shell tests' waits are stretched by (tests/lib.sh: wait_for): the
# same code as the C tests' deadlines.
$(B)/tests/deadline: tests/helper/deadline.c tests/support/deadline.c tests/support/deadline.h $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/helper/deadline.c tests/support/deadline.c

# The memory-thrashing workload (bench/thrash.c), for the memory-pressure
# tests and bench/oomd-peer.sh.
$(B)/tests/thrash: bench/thrash.c $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WORKLOAD_CFLAGS) -o $@ $<

tests: all test-programs
test-programs: $(TEST_BIN) $(B)/tests/forkbomb $(B)/tests/thrash $(B)/tests/deadline

# What the tests run, installed on Debian when missing (as bench/ does);
# command:package. README.md names them (tests/test-readme.sh). APT_GET:
# for tests/test-make.sh.
TEST_DEPS := prove:perl python3:python3 mandoc:mandoc groff:groff-base pkg-config:pkgconf nm:binutils \
	zsh:zsh fish:fish abidiff:abigail-tools swapon:mount mkswap:util-linux buildah:buildah \
	systemd-analyze:systemd
# The Kubernetes manifests' schemas (tests/test-deploy.sh), from npm.
K8S_MODELS := kubernetes-models@5.1.0
APT_GET ?= apt-get
test-deps:
	@need=; for d in $(TEST_DEPS); do command -v $${d%%:*} >/dev/null || need="$$need $${d#*:}"; done; \
	[ -f /usr/share/bash-completion/bash_completion ] || need="$$need bash-completion"; \
	/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || need="$$need python3-jsonschema"; \
	if [ -n "$$need" ]; then echo "make check: the tests need these packages, installing them with $(APT_GET):$$need"; \
		{ $(APT_GET) install -y -qq $$need || { $(APT_GET) update -qq && $(APT_GET) install -y -qq $$need; }; } \
		>/dev/null 2>&1 || echo "cannot install:$$need (tests that need it fail or skip)"; fi
	@if command -v npm >/dev/null && [ ! -d "$$(npm root -g)/kubernetes-models" ]; then \
		echo "make check: the tests need $(K8S_MODELS) (npm), installing it with npm install -g"; \
		npm install -g -s $(K8S_MODELS) >/dev/null 2>&1 || echo "cannot install $(K8S_MODELS) (tests/test-deploy.sh fails or skips)"; fi

# CGKILL_TEST_NO_SKIP=1 turns a skipped cgroup test into a failure (CI sets it);
# CGKILL_TEST_TIMEOUT (seconds, 900 by default) fails a file that hangs
# (tests/run-test; the C tests' watchdog takes it too). --timer: each
# file's time, for finding the slow ones.
check: test-deps tests
	CGKILL=$(abspath $(B)/cgkill) CGKILL_BUILD=$(abspath $(B)) \
		prove -f --timer --exec tests/run-test $(TEST_BIN) $(TEST_SH)

# Builds the Debian packages in a copy of the tree and installs them in a
# scratch root (slow; needs debhelper and dpkg-dev: it fails, saying so,
# without them). DEB_TOOLS: the programs it needs.
DEB_TOOLS := dpkg-buildpackage dh dpkg-deb dpkg-parsechangelog dpkg-architecture
check-deb:
	DEB_TOOLS="$(DEB_TOOLS)" prove -f --exec "" tests/check-deb.sh

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer.
check-asan:
	$(MAKE) check B=build-asan \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" CGKILL_LDFLAGS=

demo: all
	./demo.sh

# Static analysis: cppcheck, and clang-tidy's bugprone and analyzer checks
# but those this code answers otherwise: the cleanup attribute frees what
# unix.Malloc calls leaked, the analyzer's NULLs come from parsers that
# never return them, strcmp() without "== 0" is house style, and the
# va_list checker does not see va_start() in a function with a format
# attribute.
TIDY_CHECKS := -*,bugprone-*,clang-analyzer-*,-bugprone-easily-swappable-parameters,\
	-bugprone-reserved-identifier,-bugprone-narrowing-conversions,\
	-bugprone-assignment-in-if-condition,-bugprone-suspicious-string-compare,\
	-bugprone-implicit-widening-of-multiplication-result,-bugprone-sizeof-expression,\
	-clang-analyzer-security.insecureAPI.*,-clang-analyzer-unix.Malloc,\
	-clang-analyzer-core.NonNullParamChecker,-clang-analyzer-valist.Uninitialized
lint:
	cppcheck -q --enable=warning,performance,portability --std=c11 $(CPPFLAGS) \
		--error-exitcode=1 lib cli daemon ctl
	# one file a run: clang-tidy 14 has crashed in its parser (a comment)
	# late in one run over all of them, on files it passes alone
	for f in lib/*.c cli/*.c daemon/*.c ctl/*.c; do \
		clang-tidy --quiet --warnings-as-errors='*' --checks='$(subst $(eval) ,,$(TIDY_CHECKS))' \
			"$$f" -- $(CPPFLAGS) -std=gnu11 || exit 1; \
	done

# The ABI baseline tests/test-abi.sh compares against: refreshed at a
# release, never to make a failing check pass.
abi-baseline: $(B)/libcgkill.so
	abidw --no-corpus-path --headers-dir include --drop-private-types $< > abi/libcgkill.abi

bench: all
	$(MAKE) -C bench FULL=$(FULL)

fuzz: $(FUZZ_SRC:fuzz/%.c=$(B)/fuzz/%)
$(B)/fuzz/%: fuzz/%.c $(LIB_SRC) include/cgkill.h lib/internal.h
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_SRC)

# Paths in libcgkill.pc are written relative to ${prefix} where they can be.
pcdir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
# Every function of cgkill.h has its name as a man page (LPAREN: make
# counts parentheses).
LPAREN := (
MAN3_LINKS := $(shell sed -n 's/^[a-z].*[ *]\(cgk_[a-z0-9_]*\)$(LPAREN).*/\1/p' include/cgkill.h)

# Installed when the tree has them: the zsh and fish completions (of cgkill
# and cgkilld), the JSON schema of the reports.
ZSHCOMP := $(wildcard completion/_cgkill completion/_cgkilld)
FISHCOMP := $(wildcard completion/cgkill.fish completion/cgkilld.fish)
SCHEMA := $(wildcard data/cgkill-report.schema.json)
DOCS := README.md SECURITY.md

# The daemon too (daemon/daemon.mk: its binary, man pages, unit, example
# configuration, bash completion); nothing is enabled.
install: all $(if $(DAEMON_BIN),install-daemon)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR) $(if $(ZSHCOMP),$(DESTDIR)$(ZSHCOMPDIR)) \
		$(if $(FISHCOMP),$(DESTDIR)$(FISHCOMPDIR)) $(if $(SCHEMA),$(DESTDIR)$(PKGDATADIR))
	install -m 755 $(B)/cgkill $(DESTDIR)$(BINDIR)/cgkill
	install -m 644 $(B)/libcgkill.a $(DESTDIR)$(LIBDIR)/libcgkill.a
	install -m 755 $(B)/libcgkill.so $(DESTDIR)$(LIBDIR)/$(LIBFILE)
	ln -sf $(LIBFILE) $(DESTDIR)$(LIBDIR)/libcgkill.so.$(SOVERSION)
	ln -sf libcgkill.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libcgkill.so
	install -m 644 include/cgkill.h $(DESTDIR)$(INCLUDEDIR)/cgkill.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pcdir,$(LIBDIR))|' \
		-e 's|@INCLUDEDIR@|$(call pcdir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
		libcgkill.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libcgkill.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/libcgkill.pc
	install -m 644 man/cgkill.1 $(DESTDIR)$(MANDIR)/man1/cgkill.1
	install -m 644 man/libcgkill.3 $(DESTDIR)$(MANDIR)/man3/libcgkill.3
	for f in $(MAN3_LINKS); do \
		echo '.so man3/libcgkill.3' > $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; \
		chmod 644 $(DESTDIR)$(MANDIR)/man3/$$f.3 || exit 1; \
	done
	install -m 644 completion/cgkill $(DESTDIR)$(BASHCOMPDIR)/cgkill
	$(if $(ZSHCOMP),install -m 644 $(ZSHCOMP) $(DESTDIR)$(ZSHCOMPDIR)/)
	$(if $(FISHCOMP),install -m 644 $(FISHCOMP) $(DESTDIR)$(FISHCOMPDIR)/)
	$(if $(SCHEMA),install -m 644 $(SCHEMA) $(DESTDIR)$(PKGDATADIR)/cgkill-report.schema.json)
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall: $(if $(DAEMON_BIN),uninstall-daemon)
	rm -f $(DESTDIR)$(BINDIR)/cgkill $(DESTDIR)$(LIBDIR)/libcgkill.a \
		$(DESTDIR)$(LIBDIR)/$(LIBFILE) \
		$(DESTDIR)$(LIBDIR)/libcgkill.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libcgkill.so \
		$(DESTDIR)$(INCLUDEDIR)/cgkill.h $(DESTDIR)$(PKGCONFIGDIR)/libcgkill.pc \
		$(DESTDIR)$(MANDIR)/man1/cgkill.1 $(DESTDIR)$(MANDIR)/man3/libcgkill.3 \
		$(MAN3_LINKS:%=$(DESTDIR)$(MANDIR)/man3/%.3) $(DESTDIR)$(BASHCOMPDIR)/cgkill \
		$(DESTDIR)$(ZSHCOMPDIR)/_cgkill $(DESTDIR)$(FISHCOMPDIR)/cgkill.fish \
		$(DESTDIR)$(ZSHCOMPDIR)/_cgkilld $(DESTDIR)$(FISHCOMPDIR)/cgkilld.fish \
		$(DESTDIR)$(PKGDATADIR)/cgkill-report.schema.json $(DOCS:%=$(DESTDIR)$(DOCDIR)/%)
	rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PKGDATADIR) 2>/dev/null || true

clean:
	rm -rf build build-asan

.PHONY: all FORCE tests test-programs test-deps check check-asan check-deb demo bench fuzz lint abi-baseline install uninstall clean
.DELETE_ON_ERROR:
# Keep the test objects: they are not worth rebuilding on every run.
.SECONDARY:
