# extalign: build, test and install.  See README.md.
#
#   make                 the programs only (build packages of scripts/packages.txt)
#   make check           build and run every test suite (tests/run.sh)
#   make check-qemu      the kernel series as a Debian package, installed and
#                        booted in QEMU (kernel/deb.sh, kernel/qemu-test.sh)
#   make check-system    the whole stack under systemd in QEMU, with power
#                        cuts (tests/system/run.sh; CUTS=N, default 20)
#   make bench           build the benchmarks (run them with tests/bench/*.sh)
#   make install         DESTDIR, PREFIX (default /usr/local) and the *DIR
#                        variables below as in the GNU coding standards
#   make uninstall       remove what install put there; an edited
#                        configuration file stays
#   make clean
#   make V=1             show the full commands

VERSION    := 0.1.0
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
# The daemon and the CLI read /etc/extalign.conf whatever the prefix.
SYSCONFDIR ?= /etc
DESTDIR    ?=

PKG_CONFIG ?= pkg-config
INSTALL    ?= install
# bash-completion reads $XDG_DATA_DIRS/bash-completion/completions, which
# covers /usr/local/share and /usr/share: DATADIR is right for every prefix.
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
# systemd reads units from /usr/local/lib/systemd/system and, on Debian 12,
# /lib/systemd/system (what systemd.pc says) for the /usr prefix.
UNITDIR     ?= $(if $(filter /usr,$(PREFIX)),$(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system),$(PREFIX)/lib/systemd/system)
# systemd runs the generators of /usr/local/lib/systemd/system-generators
# and, on Debian 12, /lib/systemd/system-generators (systemd.pc again).
GENERATORDIR ?= $(if $(filter /usr,$(PREFIX)),$(or $(shell $(PKG_CONFIG) --variable=systemdsystemgeneratordir systemd 2>/dev/null),/lib/systemd/system-generators),$(PREFIX)/lib/systemd/system-generators)
# journalctl --update-catalog reads /usr/lib/systemd/catalog and
# /usr/local/lib/systemd/catalog (also on Debian 12, merged /usr or not).
CATALOGDIR  ?= $(PREFIX)/lib/systemd/catalog

# Quiet by default, like automake's silent rules; V=1 shows every command.
V ?= 0
ifeq ($(V),0)
Q       := @
say      = @printf '  %-8s %s\n' $(1) $(2);
else
Q       :=
say      =
endif

B := build
PKGS      := mount blkid libsystemd inih smartcols
# libmount and libblkid are dlopen()ed where needed (lib/blockdev-fs.c): their
# headers only.
LINK_PKGS := libsystemd inih smartcols
CC        ?= cc
CFLAGS    ?= -O2 -g
# Ours first, the user's (or dpkg-buildflags') CFLAGS last so they win.
EA_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	     -fno-strict-aliasing -D_GNU_SOURCE -DEXTALIGN_VERSION='"$(VERSION)"' \
	     -Iinclude -MMD -MP $(shell $(PKG_CONFIG) --cflags $(PKGS))
ALL_CFLAGS = $(EA_CFLAGS) $(CPPFLAGS) $(CFLAGS)
LIBS      := $(shell $(PKG_CONFIG) --libs $(LINK_PKGS))
# Recursively expanded: only building the unit tests asks for check, so the
# programs build without the test packages.
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check)
CHECK_LIBS   = $(shell $(PKG_CONFIG) --libs check)

LIB_OBJS    := $(patsubst %.c,$(B)/%.o,$(wildcard lib/*.c))
CMD_OBJS    := $(patsubst %.c,$(B)/%.o,$(wildcard cmd/*.c))
DAEMON_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard daemon/*.c))
UNIT_TESTS  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test-*.c))
TEST_TOOLS  := $(patsubst tests/tools/%.c,$(B)/tests/tools/%,$(wildcard tests/tools/*.c))
BENCHES     := $(patsubst tests/bench/%.c,$(B)/tests/bench/%,$(wildcard tests/bench/*.c))

GENERATOR_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard generator/*.c))

PROGRAMS := $(B)/extalign $(if $(DAEMON_OBJS),$(B)/extalignd $(B)/extalign-generator)

all: $(PROGRAMS)

# What the test suites run: unit tests, their helpers and the benchmarks
# (the kernel suite uses some of them).
tests: $(PROGRAMS) $(UNIT_TESTS) $(TEST_TOOLS) $(BENCHES)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC,$@)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Made anew each time: ar would keep the object of a file since removed.
$(B)/libextalign.a: $(LIB_OBJS)
	$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(B)/extalign: $(CMD_OBJS) $(B)/libextalign.a
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) $(LDLIBS)

$(B)/extalignd: $(DAEMON_OBJS) $(B)/libextalign.a
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) $(LDLIBS)

$(B)/extalign-generator: $(GENERATOR_OBJS) $(B)/libextalign.a
	$(call say,CCLD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) $(LDLIBS)

# $< and the library, not $^: the .d files add the headers and the .c files a
# test #includes (test-daemon-event includes daemon/event.c) as prerequisites.
$(B)/tests/%: tests/unit/%.c $(B)/libextalign.a
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libextalign.a $(CHECK_LIBS) $(LIBS) $(LDLIBS)

$(B)/tests/tools/%: tests/tools/%.c $(B)/libextalign.a
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libextalign.a $(LIBS) $(LDLIBS)

$(B)/tests/bench/%: tests/bench/%.c $(B)/libextalign.a
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libextalign.a $(LIBS) $(LDLIBS)

# Every test: unit (under valgrind), integration on loop devices, fuzz, kernel.
check: tests
	tests/run.sh

check-unit: tests
	tests/run.sh unit

check-integration: tests
	tests/run.sh integration

check-kernel: tests
	kernel/check.sh

# The e2fsprogs series (e2fsprogs/): built and its own tests; -full adds
# e2fsprogs' whole "make check" against the unpatched tree.
.PHONY: check-e2fsprogs check-e2fsprogs-full
check-e2fsprogs:
	e2fsprogs/check.sh
check-e2fsprogs-full:
	e2fsprogs/check.sh --full
# Debian packages of it (1.47.4-0extalign1) in /var/tmp/extalign-e2fsprogs/deb.
.PHONY: e2fsprogs-deb
e2fsprogs-deb:
	e2fsprogs/deb.sh

# fstests in the UML guest: the atomic-write list (kernel/fstests/).
.PHONY: check-fstests
check-fstests:
	kernel/fstests.sh atomic

# fstests' quick group on the series in FSTESTS_SHARDS slices, against the
# unpatched baseline once it is recorded (fstests-quick-baseline), on ubd
# disks (10 GiB sparse files, 512-byte sectors: the tests that want large
# disks or 1 KiB blocks run; the atomic ones are list (a)'s).  Each
# slice's results are kept as it ends, in kernel/fstests/results/: stopped,
# it goes on where it was, on another machine too once the file is
# committed.
FSTESTS_SHARDS ?= 24
# The watchdog's limit per test (FSTESTS_TEST_TIMEOUT) is 1800 s here, not
# 900: some of the group's tests fork thousands of processes, each costly
# in UML (generic/037 took 660 s).
FSTESTS_RESULTS = kernel/fstests/results
FSTESTS_QUICK = FSTESTS_TEST_TIMEOUT=$${FSTESTS_TEST_TIMEOUT:-1800} \
	kernel/fstests.sh -g quick --disks ubd --shards $(FSTESTS_SHARDS)
.PHONY: check-fstests-quick check-fstests-quick-forcealign fstests-quick-baseline fstests-group-deps
fstests-group-deps:
	scripts/install-deps.sh kernel fstests fstests-group
check-fstests-quick: fstests-group-deps
	$(FSTESTS_QUICK) --results $(FSTESTS_RESULTS)/quick-plain.series.results \
		$(if $(wildcard kernel/fstests/quick.baseline),--baseline kernel/fstests/quick.baseline)
# The same on a forcealign scratch root (issue 31's third item): every test
# passes, is NOTRUN for a reason or is an XFAIL of kernel/fstests/expected.
check-fstests-quick-forcealign: fstests-group-deps
	$(FSTESTS_QUICK) --forcealign --results $(FSTESTS_RESULTS)/quick-forcealign.series.results
fstests-quick-baseline: fstests-group-deps
	$(FSTESTS_QUICK) --base --results $(FSTESTS_RESULTS)/quick-plain.base.results \
		--record kernel/fstests/quick.baseline

# The series as an installable kernel package (kernel/deb.sh --small),
# installed and booted in QEMU, the kernel tests run there (not part of
# "make check": see kernel/README.md for its time).
.PHONY: check-qemu
check-qemu: tests
	kernel/qemu-test.sh

# The whole stack on a real boot (tests/system/run.sh): systemd as PID 1 in
# a QEMU guest, the packages installed with apt, extalignd worked, power
# cuts.  Not part of "make check": see README.md for its time.
.PHONY: check-system
check-system: tests
	scripts/install-deps.sh build deb qemu e2fsprogs
	e2fsprogs/deb.sh
	tests/system/run.sh $(if $(CUTS),--cuts $(CUTS))

bench: $(PROGRAMS) $(BENCHES)

format:
	clang-format -i $(wildcard include/extalign/*.h lib/*.c cmd/*.[ch] daemon/*.[ch] generator/*.c tests/unit/*.c)

# systemd finds a bare "extalignd" in /usr/local/sbin and /usr/sbin only;
# elsewhere (PREFIX=/opt/...) the unit gets the full path.
UNIT_EXEC_FIX := $(if $(filter /usr/sbin /usr/local/sbin,$(SBINDIR)),,s|^ExecStart=extalignd|ExecStart=$(SBINDIR)/extalignd|)
CONF := $(DESTDIR)$(SYSCONFDIR)/extalign.conf

install: $(PROGRAMS)
	$(call say,INSTALL,$(DESTDIR)$(PREFIX))$(INSTALL) -Dm755 $(B)/extalign $(DESTDIR)$(BINDIR)/extalign
	$(Q)$(INSTALL) -Dm644 cmd/extalign.8 $(DESTDIR)$(MANDIR)/man8/extalign.8
	$(Q)$(INSTALL) -Dm644 completions/extalign $(DESTDIR)$(BASHCOMPDIR)/extalign
	$(Q)$(INSTALL) -Dm644 etc/extalign.conf.5 $(DESTDIR)$(MANDIR)/man5/extalign.conf.5
	$(Q)$(INSTALL) -Dm644 cmd/extalign-json.schema.json $(DESTDIR)$(DATADIR)/extalign/extalign-json.schema.json
	$(if $(DAEMON_OBJS),$(Q)$(INSTALL) -Dm755 $(B)/extalignd $(DESTDIR)$(SBINDIR)/extalignd)
	$(if $(DAEMON_OBJS),$(Q)$(INSTALL) -Dm755 $(B)/extalign-generator $(DESTDIR)$(GENERATORDIR)/extalign-generator)
	$(if $(DAEMON_OBJS),$(Q)$(INSTALL) -Dm644 daemon/extalignd.8 $(DESTDIR)$(MANDIR)/man8/extalignd.8)
	$(if $(DAEMON_OBJS),$(Q)$(INSTALL) -Dm644 completions/extalignd $(DESTDIR)$(BASHCOMPDIR)/extalignd)
	$(if $(DAEMON_OBJS),$(Q)$(INSTALL) -Dm644 daemon/extalignd.catalog $(DESTDIR)$(CATALOGDIR)/extalignd.catalog)
	$(Q)$(foreach u,$(wildcard etc/*.service etc/*.timer),\
		$(INSTALL) -d $(DESTDIR)$(UNITDIR) && \
		sed -e '$(UNIT_EXEC_FIX)' $(u) >$(DESTDIR)$(UNITDIR)/$(notdir $(u)).tmp && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$(notdir $(u)).tmp && \
		mv -f $(DESTDIR)$(UNITDIR)/$(notdir $(u)).tmp $(DESTDIR)$(UNITDIR)/$(notdir $(u));)
# An admin's configuration is never overwritten: the new default goes
# beside it as extalign.conf.new.
	$(Q)if [ -e $(CONF) ] && ! cmp -s etc/extalign.conf $(CONF); then \
		$(INSTALL) -Dm644 etc/extalign.conf $(CONF).new; \
		echo "$(CONF) is kept; the new default is $(CONF).new"; \
	else \
		$(INSTALL) -Dm644 etc/extalign.conf $(CONF); \
	fi

# Removes what install put there.  The configuration only when it is still
# the shipped default: edits are the admin's.
uninstall:
	$(call say,RM,$(DESTDIR)$(PREFIX))rm -f $(DESTDIR)$(BINDIR)/extalign $(DESTDIR)$(SBINDIR)/extalignd \
		$(DESTDIR)$(MANDIR)/man8/extalign.8 $(DESTDIR)$(MANDIR)/man8/extalignd.8 \
		$(DESTDIR)$(MANDIR)/man5/extalign.conf.5 $(DESTDIR)$(BASHCOMPDIR)/extalign \
		$(DESTDIR)$(BASHCOMPDIR)/extalignd $(DESTDIR)$(GENERATORDIR)/extalign-generator \
		$(DESTDIR)$(CATALOGDIR)/extalignd.catalog \
		$(foreach u,$(wildcard etc/*.service etc/*.timer),$(DESTDIR)$(UNITDIR)/$(notdir $(u))) \
		$(DESTDIR)$(DATADIR)/extalign/extalign-json.schema.json \
		$(CONF).new
	$(Q)rmdir $(DESTDIR)$(DATADIR)/extalign 2>/dev/null || true
	$(Q)if cmp -s etc/extalign.conf $(CONF); then rm -f $(CONF); \
	elif [ -e $(CONF) ]; then echo "$(CONF) has local changes and is kept"; fi

clean:
	rm -rf $(B)

.PHONY: all tests check check-unit check-integration check-kernel bench format install uninstall clean
.SECONDARY:

-include $(shell find $(B) -name '*.d' 2>/dev/null)
