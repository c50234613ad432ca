#!/usr/bin/python3
"""One line per test, "NAME STATUS REASON", from what fstests' ./check
left in the result directory OUT of kernel/fstests.sh.

Usage: report.py OUT TEST...

./check runs without -R xunit: in UML that report (rewritten with a
dozen commands before every test) cost more CPU than the tests of list
(a) themselves.  What ./check prints is enough:

  OUT/check.out   one line per test that starts with its name: "16s"
                  when it passed, "[not run] REASON", or what failed;
                  at the end "Ran:", "Not run:" and "Failures:" lines
  OUT/results/TEST.notrun   the reason of a test that did not run
  OUT/timeouts    "TEST SECONDS" per test the guest's watchdog killed

A test ./check never reached (it stopped early) is a FAIL.
"""
import re
import sys

out, tests = sys.argv[1], sys.argv[2:]
wanted = set(tests)
line_of = {}
summary = {}
try:
    with open(out + "/check.out", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"(Ran|Not run|Failures):(.*)", line)
            if m:
                summary[m.group(1)] = set(m.group(2).split())
                continue
            name = line.split(" ", 1)[0]
            if name in wanted:
                line_of[name] = line[len(name):].strip()
except OSError as e:
    print(f"report.py: {e}", file=sys.stderr)

timeouts = {}
try:
    with open(out + "/timeouts") as f:
        for line in f:
            name, secs = line.split()
            timeouts[name] = secs
except OSError:
    pass


def notrun_reason(name, text):
    try:
        with open(f"{out}/results/{name}.notrun", errors="replace") as f:
            return f.read()
    except OSError:
        return text.split("[not run]", 1)[-1]


for name in tests:
    text = line_of.get(name)
    passed = re.fullmatch(r"(?:.*\.\.\.\s+)?(\d+)s", text or "")
    if name in timeouts:
        status, reason = "FAIL", f"timed out after {timeouts[name]}s (FSTESTS_TEST_TIMEOUT)"
    elif text is None:
        status, reason = "FAIL", "not in fstests' output: did not run"
    elif name in summary.get("Failures", ()):
        status, reason = "FAIL", text
    elif "[not run]" in text:
        status, reason = "NOTRUN", notrun_reason(name, text)
    elif passed and ("Ran" not in summary or name in summary["Ran"]):
        status, reason = "PASS", passed.group(1) + "s"
    else:
        status, reason = "FAIL", text or "no result: ./check stopped during it"
    print(name, status, " ".join(reason.split()))
