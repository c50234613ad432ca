#!/bin/bash
# make install puts programs, man pages, completion and units where asked,
# and the completion answers.
. "$(dirname "$0")/lib.sh"
cd "$TOP"

root=$WORK/root
make -s install DESTDIR="$root" PREFIX=/usr >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "make install"; }
[ -x "$root/usr/bin/extalign" ] || fail "no extalign binary"
[ -f "$root/usr/share/man/man8/extalign.8" ] || fail "no extalign.8"
comp=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null || true)
[ -n "$comp" ] || comp=/usr/share/bash-completion/completions
[ -f "$root$comp/extalign" ] || fail "no completion in $comp"
if [ -n "$(ls daemon/*.c 2>/dev/null)" ]; then
	[ -x "$root/usr/sbin/extalignd" ] || fail "no extalignd"
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
