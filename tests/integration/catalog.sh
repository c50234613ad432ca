#!/bin/bash
# The journal catalog of extalignd: journalctl imports it without a word,
# lists every entry with a subject, and the catalog and the code name the
# same MESSAGE_IDs, each one sent somewhere in the daemon.
. "$(dirname "$0")/lib.sh"
need_cmd journalctl
cd "$TOP" || exit 1

CAT=daemon/extalignd.catalog
IDS=daemon/message-ids.h

# The IDs: of the header (MSGID_NAME "id"), of the catalog ("-- id").
sed -n 's/^#define MSGID_[A-Z_]*[[:space:]]*"\([^"]*\)"$/\1/p' "$IDS" | sort >"$WORK/code.ids"
sed -n 's/^-- \(.*\)$/\1/p' "$CAT" | sort >"$WORK/catalog.ids"
[ -s "$WORK/code.ids" ] || fail "no MESSAGE_ID in $IDS"
grep -cv '^[0-9a-f]\{32\}$' "$WORK/code.ids" "$WORK/catalog.ids" | grep -v ':0$' &&
	fail "an ID that is not 128 bits of lower-case hex"
[ -z "$(uniq -d "$WORK/code.ids")" ] || fail "an ID used twice in $IDS: $(uniq -d "$WORK/code.ids")"
[ -z "$(uniq -d "$WORK/catalog.ids")" ] || fail "an ID with two catalog entries: $(uniq -d "$WORK/catalog.ids")"
diff -u "$WORK/code.ids" "$WORK/catalog.ids" >"$WORK/diff" ||
	{ cat "$WORK/diff"; fail "$IDS and $CAT disagree (- only in the code, + only in the catalog)"; }
# Every ID of the header is sent by some message, and the code names it
# only through the header.
for name in $(sed -n 's/^#define \(MSGID_[A-Z_]*\).*/\1/p' "$IDS"); do
	grep -qw "$name" daemon/*.c || fail "$name is in $IDS but no message sends it"
done
for id in $(cat "$WORK/code.ids"); do
	grep -l "$id" daemon/*.[ch] | grep -qvx -e "$IDS" && fail "$id written out outside $IDS"
done

# extalignd(8) lists them all.
for id in $(cat "$WORK/code.ids"); do
	grep -qx "\.B $id" daemon/extalignd.8 || fail "$id is not in extalignd(8)"
done

# journalctl builds its database from it as from systemd's own catalogs.
R=$WORK/root
mkdir -p "$R/usr/lib/systemd/catalog"
make -s install DESTDIR="$WORK/inst" PREFIX=/usr >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "make install"; }
cp "$WORK/inst/usr/lib/systemd/catalog/extalignd.catalog" "$R/usr/lib/systemd/catalog/"
journalctl --root="$R" --update-catalog >"$WORK/out" 2>&1 || { cat "$WORK/out"; fail "journalctl --update-catalog failed"; }
[ ! -s "$WORK/out" ] || { cat "$WORK/out"; fail "journalctl --update-catalog complained"; }
[ -s "$R/var/lib/systemd/catalog/database" ] || fail "no catalog database"
journalctl --root="$R" --list-catalog >"$WORK/list" 2>&1 || { cat "$WORK/list"; fail "--list-catalog"; }
awk '{ print $1 }' "$WORK/list" | sort >"$WORK/listed.ids"
diff -u "$WORK/code.ids" "$WORK/listed.ids" || fail "--list-catalog does not list every ID"
# Each entry: a subject, who defines it, where to read more, and a body
# that says what to do.
grep -q ' n/a' "$WORK/list" && { cat "$WORK/list"; fail "an entry without a subject"; }
for id in $(cat "$WORK/code.ids"); do
	journalctl --root="$R" --dump-catalog "$id" >"$WORK/entry" 2>&1 || fail "--dump-catalog $id"
	grep -q '^Subject: ..........' "$WORK/entry" || { cat "$WORK/entry"; fail "$id: no subject"; }
	grep -qx 'Defined-By: extalign' "$WORK/entry" || { cat "$WORK/entry"; fail "$id: no Defined-By"; }
	grep -q '^Documentation: man:' "$WORK/entry" || { cat "$WORK/entry"; fail "$id: no Documentation"; }
	[ "$(sed '1,/^$/d' "$WORK/entry" | wc -w)" -ge 30 ] || { cat "$WORK/entry"; fail "$id: body too short"; }
	# The man pages named are ours or the system's.
	for m in $(sed -n 's/^Documentation: //p' "$WORK/entry"); do
		page=${m#man:}
		name=${page%(*} sec=${page#*(} sec=${sec%)}
		[ -f "cmd/$name.$sec" ] || [ -f "daemon/$name.$sec" ] || [ -f "etc/$name.$sec" ] ||
			man -w "$sec" "$name" >/dev/null 2>&1 || [ "$name" = fanotify ] || [ "$name" = inotify ] ||
			fail "$id: $m: no such man page"
	done
done
echo ok
