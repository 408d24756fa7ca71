# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld, the guard daemon (included by the top Makefile). Its objects are
# built by the Makefile's $(B)/%.o rule into $(B)/daemon/; it links the
# static library and uses only the public interface (cgkill.h).
DAEMON_SRC := $(sort $(wildcard daemon/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(B)/%.o)
DAEMON_BIN := $(B)/cgkilld

$(DAEMON_OBJ): daemon/cgkilld.h
$(B)/daemon/ctl.o $(B)/daemon/main.o: daemon/control.h
# the public interface only: include/, not lib/ (tests/test-layers.sh)
$(DAEMON_OBJ): CPPFLAGS := $(filter-out -Ilib,$(CPPFLAGS))

$(DAEMON_BIN): $(DAEMON_OBJ) $(B)/libcgkill.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^

# cgkillctl, the control socket's client (ctl/): the protocol's header
# alone of the daemon, static as cgkill is.
CTL_BIN := $(B)/cgkillctl
$(B)/ctl/cgkillctl.o: daemon/control.h
$(B)/ctl/cgkillctl.o: CPPFLAGS := $(filter-out -Ilib,$(CPPFLAGS))
$(CTL_BIN): $(B)/ctl/cgkillctl.o
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(CGKILL_LDFLAGS) -o $@ $^
all: $(CTL_BIN)

# fuzz/fuzz-conf.c includes daemon/config.c (the pure parser).
$(B)/fuzz/fuzz-conf: daemon/config.c daemon/cgkilld.h

# tests/test-conf-keys.c includes daemon/config.c (its key table).
$(B)/tests/test-conf-keys.o: daemon/config.c daemon/cgkilld.h

# tests/test-daemon-files.c includes daemon/files.c.
$(B)/tests/test-daemon-files.o: daemon/files.c daemon/cgkilld.h

# tests/test-victim-low.c includes daemon/protection.c (pure).
$(B)/tests/test-victim-low.o: daemon/protection.c daemon/cgkilld.h

# tests/test-victim-fixture.c ranks fixture trees with victim.c, and
# tests/test-metrics.c renders metrics.c's text: linked as the daemon is
# (its objects, main.c's main() renamed so that the test's is the
# program's, and the build's static library) with tap.o alone of the test
# support (whose json.c has a json_str() of its own).
$(B)/tests/daemon-main.o: daemon/main.c daemon/cgkilld.h include/cgkill.h $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Dmain=cgkilld_main -Wno-missing-prototypes -c -o $@ $<
DAEMON_TESTS := $(B)/tests/test-victim-fixture $(B)/tests/test-metrics
$(DAEMON_TESTS:%=%.o): daemon/cgkilld.h
$(DAEMON_TESTS): %: %.o $(B)/tests/support/tap.o \
		$(filter-out $(B)/daemon/main.o,$(DAEMON_OBJ)) $(B)/tests/daemon-main.o $(B)/libcgkill.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ -lpthread

# tests/test-fork-counter.c loads and drives the fork counter (forkbpf.c).
$(B)/tests/test-fork-counter.o: daemon/cgkilld.h
$(B)/tests/test-fork-counter: $(B)/daemon/forkbpf.o

# forkprobe: a workload's forks and execs per window, through the same
# counter (for choosing ForkRate= and ForkWindow=).
$(B)/tests/forkprobe: tests/helper/forkprobe.c $(B)/daemon/forkbpf.o daemon/cgkilld.h $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ tests/helper/forkprobe.c $(B)/daemon/forkbpf.o
test-programs: $(B)/tests/forkprobe

SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
SBINDIR ?= $(PREFIX)/sbin
# Drop-ins for what the unit's sandbox forbids, shipped as examples.
UNIT_DROPINS := $(sort $(wildcard data/cgkilld.service.d/*.conf.example))

# Part of make install (and uninstall); nothing is enabled.
install-daemon: $(DAEMON_BIN) $(CTL_BIN)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(DOCDIR)/cgkilld.service.d $(DESTDIR)$(PKGDATADIR)
	install -m 755 $(DAEMON_BIN) $(DESTDIR)$(SBINDIR)/cgkilld
	install -m 755 $(CTL_BIN) $(DESTDIR)$(SBINDIR)/cgkillctl
	install -m 644 man/cgkilld.8 $(DESTDIR)$(MANDIR)/man8/cgkilld.8
	install -m 644 man/cgkillctl.8 $(DESTDIR)$(MANDIR)/man8/cgkillctl.8
	install -m 644 man/cgkilld.conf.5 $(DESTDIR)$(MANDIR)/man5/cgkilld.conf.5
	sed 's|@SBINDIR@|$(SBINDIR)|g' data/cgkilld.service > $(DESTDIR)$(SYSTEMDUNITDIR)/cgkilld.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/cgkilld.service
	install -m 644 data/cgkilld.conf.example $(DESTDIR)$(DOCDIR)/cgkilld.conf.example
	install -m 644 $(UNIT_DROPINS) $(DESTDIR)$(DOCDIR)/cgkilld.service.d/
	install -m 644 data/cgkilld-status.schema.json $(DESTDIR)$(PKGDATADIR)/cgkilld-status.schema.json
	install -m 644 completion/cgkilld $(DESTDIR)$(BASHCOMPDIR)/cgkilld
	install -m 644 completion/cgkillctl $(DESTDIR)$(BASHCOMPDIR)/cgkillctl

uninstall-daemon:
	rm -f $(DESTDIR)$(SBINDIR)/cgkilld $(DESTDIR)$(MANDIR)/man8/cgkilld.8 \
		$(DESTDIR)$(SBINDIR)/cgkillctl $(DESTDIR)$(MANDIR)/man8/cgkillctl.8 \
		$(DESTDIR)$(PKGDATADIR)/cgkilld-status.schema.json \
		$(DESTDIR)$(MANDIR)/man5/cgkilld.conf.5 $(DESTDIR)$(SYSTEMDUNITDIR)/cgkilld.service \
		$(DESTDIR)$(DOCDIR)/cgkilld.conf.example $(DESTDIR)$(BASHCOMPDIR)/cgkilld \
		$(DESTDIR)$(BASHCOMPDIR)/cgkillctl $(UNIT_DROPINS:data/%=$(DESTDIR)$(DOCDIR)/%)
	rmdir $(DESTDIR)$(DOCDIR)/cgkilld.service.d 2>/dev/null || true

.PHONY: install-daemon uninstall-daemon

# The shipped unit's ProtectSystem= and ReadWritePaths=, which check.c
# compares EventLog= with: read from the unit itself, so that the two
# cannot drift (tests/test-cgkilld-check.sh runs the daemon on them).
UNIT_PROTECT_SYSTEM := $(shell sed -n 's/^ProtectSystem=//p' data/cgkilld.service)
UNIT_READ_WRITE_PATHS := $(shell sed -n 's/^ReadWritePaths=//p' data/cgkilld.service)
$(B)/daemon/check.o: data/cgkilld.service
$(B)/daemon/check.o: CPPFLAGS += -DUNIT_PROTECT_SYSTEM='"$(UNIT_PROTECT_SYSTEM)"' \
	-DUNIT_READ_WRITE_PATHS='"$(UNIT_READ_WRITE_PATHS)"'
