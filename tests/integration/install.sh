#!/bin/bash
# make builds the programs without the test packages; make install puts
# programs, man pages, completion and units where asked, under the prefix,
# never over an edited /etc/extalign.conf; make uninstall takes them away;
# the completion answers.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1

# The default target must not need check.h: no recipe of it asks pkg-config
# for "check", and none builds anything under tests/.
cat >"$WORK/pkg-config" <<'PC'
#!/bin/sh
echo "$*" >>"${0%/*}/pkg-config.log"
exec pkg-config "$@"
PC
chmod 755 "$WORK/pkg-config"
make -n -B PKG_CONFIG="$WORK/pkg-config" >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "make -n"; }
grep -qw check "$WORK/pkg-config.log" && fail "the default target asks pkg-config for check"
grep -q 'tests/' "$WORK/out" && { grep 'tests/' "$WORK/out"; fail "the default target builds tests"; }
grep -q 'build/extalign ' "$WORK/out" || { cat "$WORK/out"; fail "the default target does not link extalign"; }

# Quiet by default, every command with V=1.
make -B build/lib/size.o >"$WORK/out" 2>&1
grep -q -- '-Wall' "$WORK/out" && fail "make is not quiet by default"
grep -q 'CC.*build/lib/size.o' "$WORK/out" || { cat "$WORK/out"; fail "quiet make names no file"; }
make -B V=1 build/lib/size.o >"$WORK/out" 2>&1
grep -q -- '-Wall' "$WORK/out" || { cat "$WORK/out"; fail "V=1 does not show the command"; }

root=$WORK/root
make -s install DESTDIR="$root" PREFIX=/usr >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "make install"; }
[ -x "$root/usr/bin/extalign" ] || fail "no extalign binary"
[ -f "$root/usr/share/man/man8/extalign.8" ] || fail "no extalign.8"
comp=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null || true)
[ -n "$comp" ] || comp=/usr/share/bash-completion/completions
[ -f "$root$comp/extalign" ] || fail "no completion in $comp"
if [ -n "$(ls daemon/*.c 2>/dev/null)" ]; then
	[ -x "$root/usr/sbin/extalignd" ] || fail "no extalignd"
	# Where journalctl --update-catalog looks (systemd.pc's catalogdir).
	[ -f "$root/usr/lib/systemd/catalog/extalignd.catalog" ] || fail "no journal catalog"
fi
for u in etc/*.service; do
	[ -e "$u" ] || continue
	unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
	[ -f "$root$unitdir/$(basename "$u")" ] || fail "unit $u not installed in $unitdir"
done

# Without the bash-completion package pkg-config answers nothing: fall back
# to DATADIR/bash-completion/completions.
root2=$WORK/root2
make -s install DESTDIR="$root2" PREFIX=/opt/ea PKG_CONFIG=false >"$WORK/out" 2>&1 ||
	{ cat "$WORK/out"; fail "make install with PKG_CONFIG=false"; }
[ -f "$root2/opt/ea/share/bash-completion/completions/extalign" ] || fail "no fallback completion dir"

# PREFIX=/usr/local: everything under the prefix but the configuration;
# the unit where systemd looks for local units.
root3=$WORK/root3
make -s install DESTDIR="$root3" PREFIX=/usr/local >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "make install PREFIX=/usr/local"; }
stray=$(cd "$root3" && find . -type f ! -path './usr/local/*' ! -path ./etc/extalign.conf)
[ -z "$stray" ] || fail "installed outside /usr/local: $stray"
[ -f "$root3/usr/local/share/bash-completion/completions/extalign" ] || fail "no completion under /usr/local/share"
[ -f "$root3/usr/local/share/man/man5/extalign.conf.5" ] || fail "no extalign.conf.5"
[ -f "$root3/usr/local/share/extalign/extalign-json.schema.json" ] || fail "no JSON schema under /usr/local/share/extalign"
[ -f "$root3/usr/local/lib/systemd/catalog/extalignd.catalog" ] || fail "no catalog under /usr/local/lib/systemd/catalog"
for u in etc/*.service; do
	[ -e "$u" ] || continue
	[ -f "$root3/usr/local/lib/systemd/system/$(basename "$u")" ] || fail "unit $u not in /usr/local/lib/systemd/system"
	grep -q '^ExecStart=extalignd' "$root3/usr/local/lib/systemd/system/$(basename "$u")" ||
		fail "unit for /usr/local changed ExecStart"
done
# A prefix systemd does not search: the unit names the daemon by full path.
if [ -f etc/extalignd.service ]; then
	grep -q '^ExecStart=/opt/ea/sbin/extalignd ' "$root2/opt/ea/lib/systemd/system/extalignd.service" ||
		fail "unit under /opt/ea does not run /opt/ea/sbin/extalignd"
fi

# A second install keeps an edited configuration and puts the new one
# beside it; an unedited one is simply replaced.
conf=$root3/etc/extalign.conf
cmp -s etc/extalign.conf "$conf" || fail "first install did not install extalign.conf"
make -s install DESTDIR="$root3" PREFIX=/usr/local >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "reinstall"; }
[ ! -e "$conf.new" ] || fail "an unedited configuration got a .new"
printf '[rule mine]\ndirectory = /srv/mine\nextsize = 64k\n' >>"$conf"
cp "$conf" "$WORK/edited.conf"
make -s install DESTDIR="$root3" PREFIX=/usr/local >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "reinstall over an edit"; }
cmp -s "$WORK/edited.conf" "$conf" || fail "make install overwrote an edited extalign.conf"
cmp -s etc/extalign.conf "$conf.new" || fail "no extalign.conf.new beside the edited one"
grep -q 'extalign.conf.new' "$WORK/out" || { cat "$WORK/out"; fail "install did not say where the new default went"; }

# uninstall removes every file install put there but the edited configuration.
make -s uninstall DESTDIR="$root3" PREFIX=/usr/local >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "make uninstall"; }
left=$(cd "$root3" && find . -type f)
[ "$left" = ./etc/extalign.conf ] || fail "uninstall left: $left"
cmp -s "$WORK/edited.conf" "$conf" || fail "uninstall changed the edited configuration"
grep -q 'kept' "$WORK/out" || { cat "$WORK/out"; fail "uninstall did not say the configuration stays"; }
# ... and an unedited one goes too.
make -s install DESTDIR="$root2" PREFIX=/opt/ea >/dev/null 2>&1
make -s uninstall DESTDIR="$root2" PREFIX=/opt/ea >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "uninstall /opt/ea"; }
left=$(cd "$root2" && find . -type f)
[ -z "$left" ] || fail "uninstall of an unedited install left: $left"

# The completion itself: subcommands and options.
[ -f /usr/share/bash-completion/bash_completion ] || skip "bash-completion is not installed"
got=$(bash -c '. /usr/share/bash-completion/bash_completion; . completions/extalign
	COMP_WORDS=(extalign se); COMP_CWORD=1; COMP_LINE="extalign se"; COMP_POINT=11
	_extalign_module; echo "${COMPREPLY[*]}"')
[ "$got" = set ] || fail "completion of 'se' gave '$got'"
got=$(bash -c '. /usr/share/bash-completion/bash_completion; . completions/extalign
	COMP_WORDS=(extalign set --ext); COMP_CWORD=2; COMP_LINE="extalign set --ext"; COMP_POINT=18
	_extalign_module; echo "${COMPREPLY[*]}"')
[ "$got" = --extsize ] || fail "completion of 'set --ext' gave '$got'"
echo ok
