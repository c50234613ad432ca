# extalign: build, test and install.  See README.md.

VERSION    := 0.1.0
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
SYSCONFDIR ?= /etc
DESTDIR    ?=

PKG_CONFIG ?= pkg-config
# Where the bash-completion package wants completions; without the package
# pkg-config answers nothing and we use the standard place under DATADIR.
BASHCOMPDIR ?= $(or $(shell $(PKG_CONFIG) --variable=completionsdir bash-completion 2>/dev/null),$(DATADIR)/bash-completion/completions)
UNITDIR     ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)

B := build
PKGS      := mount blkid libsystemd inih smartcols
CC        ?= cc
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	     -fno-strict-aliasing -D_GNU_SOURCE -DEXTALIGN_VERSION='"$(VERSION)"' \
	     -Iinclude -MMD -MP $(shell $(PKG_CONFIG) --cflags $(PKGS))
LDLIBS    += $(shell $(PKG_CONFIG) --libs $(PKGS))
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check)
CHECK_LIBS   := $(shell $(PKG_CONFIG) --libs check)

LIB_OBJS    := $(patsubst %.c,$(B)/%.o,$(wildcard lib/*.c))
CMD_OBJS    := $(patsubst %.c,$(B)/%.o,$(wildcard cmd/*.c))
DAEMON_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard daemon/*.c))
UNIT_TESTS  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test-*.c))
TEST_TOOLS  := $(patsubst tests/tools/%.c,$(B)/tests/tools/%,$(wildcard tests/tools/*.c))
BENCHES     := $(patsubst tests/bench/%.c,$(B)/tests/bench/%,$(wildcard tests/bench/*.c))

PROGRAMS := $(B)/extalign $(if $(DAEMON_OBJS),$(B)/extalignd)

all: $(PROGRAMS) $(UNIT_TESTS) $(TEST_TOOLS) $(BENCHES)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/libextalign.a: $(LIB_OBJS)
	$(AR) rcs $@ $^

$(B)/extalign: $(CMD_OBJS) $(B)/libextalign.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/extalignd: $(DAEMON_OBJS) $(B)/libextalign.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libextalign.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(B)/tests/tools/%: tests/tools/%.c $(B)/libextalign.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/bench/%: tests/bench/%.c $(B)/libextalign.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Every test: unit (under valgrind), integration on loop devices, kernel.
check: all
	tests/run.sh

check-unit: all
	tests/run.sh unit

check-integration: all
	tests/run.sh integration

check-kernel: all
	kernel/check.sh

# fstests in the UML guest: the atomic-write list (kernel/fstests/).
.PHONY: check-fstests
check-fstests:
	kernel/fstests.sh atomic

bench: all
	tests/bench/run.sh

format:
	clang-format -i $(wildcard include/extalign/*.h lib/*.c cmd/*.[ch] daemon/*.[ch] tests/unit/*.c)

install: $(PROGRAMS)
	install -Dm755 $(B)/extalign $(DESTDIR)$(BINDIR)/extalign
	install -Dm644 cmd/extalign.8 $(DESTDIR)$(MANDIR)/man8/extalign.8
	install -Dm644 completions/extalign $(DESTDIR)$(BASHCOMPDIR)/extalign
	$(if $(wildcard etc/extalign.conf.5),install -Dm644 etc/extalign.conf.5 $(DESTDIR)$(MANDIR)/man5/extalign.conf.5)
	$(if $(wildcard etc/extalign.conf),install -Dm644 etc/extalign.conf $(DESTDIR)$(SYSCONFDIR)/extalign.conf)
	$(if $(DAEMON_OBJS),install -Dm755 $(B)/extalignd $(DESTDIR)$(SBINDIR)/extalignd)
	$(if $(wildcard daemon/extalignd.8),install -Dm644 daemon/extalignd.8 $(DESTDIR)$(MANDIR)/man8/extalignd.8)
	$(foreach u,$(wildcard etc/*.service etc/*.timer),install -Dm644 $(u) $(DESTDIR)$(UNITDIR)/$(notdir $(u));)

clean:
	rm -rf $(B)

.PHONY: all check check-unit check-integration check-kernel bench format install clean
.SECONDARY:

-include $(shell find $(B) -name '*.d' 2>/dev/null)
