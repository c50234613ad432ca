#!/bin/bash
# Every command's --json against the one schema, cmd/extalign-json.schema.json,
# and the rules of extalign(8) JSON OUTPUT a schema cannot say: keys are
# lower-case words joined by '_' at every depth, and the objects of one
# array have the same keys.  The documents come from real runs on XFS and
# ext4 images, with a name that is not UTF-8 and a running extalignd; each
# is kept in $WORK/json/ under the name of its $defs entry.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon.bash"
need_root

# The validator: python3-jsonschema (scripts/packages.txt), in whichever
# python3 has it.
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import jsonschema' 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || skip "no python3 with jsonschema (scripts/install-deps.sh test installs python3-jsonschema)"

SCHEMA=$TOP/cmd/extalign-json.schema.json
J=$WORK/json
mkdir -p "$J"

# json DEF CMD...: run CMD (any exit status), keep its stdout as $J/DEF.N.json.
n=0
json() {
	local def=$1
	shift
	n=$((n + 1))
	"$@" >"$J/$def.$n.json" 2>>"$WORK/stderr" || true
	[ -s "$J/$def.$n.json" ] || { cat "$WORK/stderr"; fail "no JSON from: $*"; }
}

daemon_xfs db logs
ext4=$(mkfs_mount ext4 64 -b 4096)
odd=$(printf 'caf\xe9')
head -c 65536 /dev/urandom >"$M/db/data.ibd"
touch "$M/db/empty.ibd" "$M/db/$odd" "$ext4/f"
head -c 8192 /dev/urandom >"$M/logs/binlog.000001"
"$EXTALIGN" set --extsize 16k "$M/db/empty.ibd" >/dev/null
{
	printf '[daemon]\n'
	conf_idle_open
	printf 'realign_windows = 22:00-06:00\n'
	conf_rule db 16k realign=yes
	conf_rule logs none
	printf '\n[rule big]\ndirectory = %s\nextsize = 64k\nforcealign = yes\nmatch = *.ibd\nexclude = tmp*\n' "$M/db"
} >"$CONF"

json get "$EXTALIGN" get --json "$M/db/data.ibd" "$M/db/empty.ibd" "$M/db/$odd" "$M/db" "$ext4/f"
json get "$EXTALIGN" get --json -R "$M"
json check "$EXTALIGN" check --json "$M/db/data.ibd" "$M/db/empty.ibd" "$M/db/$odd"
json check "$EXTALIGN" check --json -R --config "$CONF" "$M"
json check "$EXTALIGN" check --json --extsize 16k "$M/db/data.ibd"
json devices "$EXTALIGN" devices --json
json devices "$EXTALIGN" devices --json --probe "$M" "$M/db/data.ibd" "$M/db" "$ext4/f"
all=$("$EXTALIGN" devices --help | awk '/^Columns:/ { on = 1; next } on { printf "%s%s", sep, $1; sep = "," }')
json devices "$EXTALIGN" devices --json --probe -o "$all" "$M/db/data.ibd"
json policy_show "$EXTALIGN" policy show --json --config "$CONF"
json policy_show_daemon "$EXTALIGN" policy show --daemon --json --config "$CONF"
json policy_explain "$EXTALIGN" policy explain --json --config "$CONF" "$M/db/data.ibd" "$M/db" /nowhere
json realign "$EXTALIGN" realign --json --dry-run --extsize 16k "$M/db/data.ibd" "$M/db/$odd"
json realign "$EXTALIGN" realign --json --dry-run --config "$CONF" "$M" "$ext4/f"
json realign "$EXTALIGN" realign --json --extsize 16k "$M/db/data.ibd" "$ext4/f"
json status "$EXTALIGN" status --json --state-dir "$WORK/no-daemon"

# A running daemon, with errors (a refused reload) and late files to list.
start_daemon "$CONF"
head -c 4096 /dev/urandom >"$M/db/late.ibd"
printf '\n[rule broken]\ndirectory = relative\n' >>"$CONF"
kill -HUP "$DAEMON_PID"
wait_until 5 counter_at_least reload_failures 1 || fail "the broken reload was not refused"
json status "$EXTALIGN" status --json --state-dir "$RUNDIR"
stop_daemon
json status "$EXTALIGN" status --json --state-dir "$RUNDIR"

"$PY" - "$SCHEMA" "$J" <<'PY' || fail "a --json document does not follow the schema"
import glob, json, os, re, sys
import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
KEY = re.compile(r"^[a-z][a-z0-9_]*$")


def validator(name):
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})


def rules(doc, where="$"):
    """The rules no schema says: key spelling everywhere, one key set per array."""
    errors = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if not KEY.match(k):
                errors.append(f"{where}: key {k!r} is not lower-case words joined by '_'")
            errors += rules(v, f"{where}.{k}")
    elif isinstance(doc, list):
        keysets = {frozenset(set(o) - {"children"}) for o in doc if isinstance(o, dict)}
        if len(keysets) > 1:
            errors.append(f"{where}: objects with different keys: {sorted(map(sorted, keysets))}")
        for i, v in enumerate(doc):
            errors += rules(v, f"{where}[{i}]")
    return errors


bad = 0
for path in sorted(glob.glob(os.path.join(sys.argv[2], "*.json"))):
    name = os.path.basename(path).split(".")[0]
    with open(path, "rb") as f:
        raw = f.read()
    raw.decode("utf-8")  # valid UTF-8, or this raises
    doc = json.loads(raw)
    errors = [f"{e.json_path}: {e.message}" for e in validator(name).iter_errors(doc)]
    errors += rules(doc)
    for e in errors:
        print(f"FAIL: {os.path.basename(path)}: {e}", file=sys.stderr)
    bad += bool(errors)
    print(f"{os.path.basename(path)}: {'INVALID' if errors else 'valid'}")
sys.exit(1 if bad else 0)
PY

# What was validated covers what matters: the odd name came back byte for
# byte, the daemon's status had errors, the probe a verdict on who writes.
"$PY" - "$J" "$M/db/$odd" <<'PY' || fail "the documents lack what they were made to show"
import glob, json, os, sys
docs = {p: json.load(open(p)) for p in glob.glob(os.path.join(sys.argv[1], "*.json"))}
odd = os.fsencode(sys.argv[2])
paths = [f["path"] for p, d in docs.items() if "/get." in p for f in d["files"]]
assert any(p.encode("utf-8", "surrogateescape") == odd for p in paths), paths
running = [d for p, d in docs.items() if "/status." in p and d["running"]]
assert running and running[0]["errors"] and running[0]["marks"], running
assert running[0]["counters"]["reload_failures"] >= 1, running[0]["counters"]
untorn = [r.get("untorn") for p, d in docs.items() if "/devices." in p
          for dev in d["devices"] for r in dev.get("children", [])]
assert any(u in ("hardware", "software", "hardware+software", "none") for u in untorn), untorn
PY

# The test can fail: documents that break a rule are refused.
"$PY" - "$SCHEMA" "$J" <<'PY' || fail "the schema accepts what it must refuse"
import glob, json, os, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
def ok(name, doc):
    v = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})
    return v.is_valid(doc)
realign = json.load(open(sorted(glob.glob(os.path.join(sys.argv[2], "realign.*.json")))[0]))
assert ok("realign", realign)
realign["summary"]["hint-set"] = realign["summary"].pop("hint_set")
assert not ok("realign", realign), "summary key with '-' accepted"
check = json.load(open(sorted(glob.glob(os.path.join(sys.argv[2], "check.*.json")))[0]))
del check["files"][0]["rule"]
assert not ok("check", check), "a row without a key accepted"
PY
echo ok
