#!/bin/bash
# Issue 32: a whole data directory checked against its rules.  A MySQL-like
# tree: .ibd files under a 16K rule (some written before the rule, without
# the hint), binlogs and redo logs under "extsize = none".  check -R
# --config gives every file a verdict and exits 1; after realign --config
# it exits 0 where the filesystem promises alignment on the device (XFS
# with a 16K stripe unit, swalloc), and where it does not (plain XFS) both
# commands name the same verdict, logical-only, and what would fix it.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd jq

# datadir MNT: the tree; prints its directory.
datadir() {
	local d=$1/mysql
	mkdir -p "$d/shop" "$d/binlog"
	# One block first, so that without stripe alignment orders.ibd starts
	# off a 16K boundary on the device.
	echo "default-character-set=utf8mb4" >"$d/shop/db.opt"
	sync
	# Made by the database after the rule: the hint before the data.
	xfs_io -f -c "extsize 16k" -c "pwrite -q 0 256k" "$d/shop/orders.ibd"
	# Written before the rule existed: no hint, runs of 5K.
	for f in customers items; do
		dd if=/dev/urandom of="$d/shop/$f.ibd" bs=5k count=13 status=none
	done
	for f in binlog/mysql-bin.000001 binlog/mysql-bin.000002 ib_logfile0 ib_logfile1; do
		dd if=/dev/urandom of="$d/$f" bs=3k count=11 status=none
	done
	sync
	echo "$d"
}

# conf DIR: the rules for it.
conf() {
	cat <<CONF
[rule innodb]
directory = $1
extsize = 16k
realign = yes

[rule logs]
directory = $1
match = mysql-bin.* ib_logfile* *.opt
extsize = none
CONF
}

for layout in stripe plain; do
	if [ $layout = stripe ]; then
		mnt=$(mkfs_mount xfs 1024 -d su=16k,sw=1)
		mount -o remount,swalloc "$mnt"
	else
		mnt=$(mkfs_mount xfs 1024)
	fi
	d=$(datadir "$mnt")
	conf "$d" >"$WORK/$layout.conf"
	C=(--config "$WORK/$layout.conf")

	# Before: the two old .ibd files lack their rule's hint.
	expect_exit 1 "$EXTALIGN" check -R "${C[@]}" --json "$d"
	[ "$(jq '.files | length' "$WORK/out")" = 8 ] || fail "$layout: not 8 files in the JSON"
	jq -e 'all(.files[]; .verdict != null and .rule != null)' "$WORK/out" >/dev/null ||
		fail "$layout: a file without a verdict or rule"
	for f in customers items; do
		[ "$(jq -r --arg p "$d/shop/$f.ibd" '.files[] | select(.path == $p) | .verdict' \
			"$WORK/out")" = hint-missing ] || fail "$layout: $f.ibd is not hint-missing"
	done
	[ "$(jq '[.files[] | select(.rule == "logs" and .verdict == "no-hint")] | length' \
		"$WORK/out")" = 5 ] || fail "$layout: the logs are not all no-hint under 'logs'"
	# Without --config a file with no hint is a verdict, not an error:
	# only orders.ibd is judged, aligned where the device side is promised.
	expect_exit "$([ $layout = stripe ] && echo 0 || echo 1)" "$EXTALIGN" check -R "$d"
	expect_in out "8 files: "
	expect_in out "7 no-hint"
	[ ! -s "$WORK/err" ] || fail "$layout: check -R wrote to stderr: $(cat "$WORK/err")"

	# The text table lines up: every VERDICT starts in the same column.
	expect_exit 1 "$EXTALIGN" check -R "${C[@]}" "$d"
	cols=$(awk 'NR == 1 { print index($0, "VERDICT") } /^\// { print index($0, " " $NF) + 1 }' \
		"$WORK/out" | sort -u | wc -l)
	[ "$cols" = 1 ] || { cat "$WORK/out"; fail "$layout: the VERDICT column does not line up"; }

	if [ $layout = stripe ]; then
		expect_exit 0 "$EXTALIGN" realign "${C[@]}" "$d"
		expect_in out "realigned 2 of 8 files"
		expect_exit 0 "$EXTALIGN" check -R "${C[@]}" "$d"
		expect_in out "8 files: 3 aligned, 5 no-hint"
	else
		# Without the promise, what lands aligned on the device is luck:
		# each .ibd is aligned or logical-only, and the two commands agree.
		"$EXTALIGN" realign "${C[@]}" "$d" >"$WORK/realign1" || true
		"$EXTALIGN" check -R "${C[@]}" --json "$d" >"$WORK/json" || true
		jq -e '[.files[] | select(.rule == "innodb")] |
			length == 3 and all(.verdict == "aligned" or .verdict == "logical-only")' \
			"$WORK/json" >/dev/null || fail "plain: after realign: $(cat "$WORK/json")"
		lo=$(jq '[.files[] | select(.verdict == "logical-only")] | length' "$WORK/json")
		[ "$lo" -gt 0 ] || fail "plain: orders.ibd is aligned on the device by luck (db.opt did not shift it)"
		expect_exit 1 "$EXTALIGN" check -R "${C[@]}" "$d"
		expect_in out "logical-only: the extents start on unit boundaries"
		expect_exit 0 "$EXTALIGN" realign "${C[@]}" "$d"
		expect_in out "$d/shop/orders.ibd: skipped: aligned in the file only"
		expect_in out "logical-only: $lo file"
		expect_in out "mkfs.xfs -d su=UNIT,sw=1"
		# Asked to, realign rewrites them all: luck again, but no error.
		expect_exit 0 "$EXTALIGN" realign --rewrite-aligned "${C[@]}" "$d"
		expect_in out "realigned 3 of 8 files"
	fi
done
echo "check-datadir: all checks passed"
