#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: the retry-storm rehearsal of evaluation.md with claimd attached.
# Starts a claimd of its own (its own pin directory, control socket and state
# under a temporary directory), then runs claimlab for T1 (a 7-chain failing
# at D, five retry policies), T2 (what one retry within a 10% budget buys
# when errors are independent), T5 (a depth-6 fan-out tree with a failing
# leaf), and T1's chain again with a real service per hop in Python, Go,
# Java and C, each using libclaim's package for its language (the polyglot
# storm, tests/peers/polyglot_storm.py). Prints each table as it goes, measured beside expected, then
# 'claimctl edges', and writes $BUILD/demo.json. Exits 1 when a measured
# figure misses its target. Stops claimd and every node on every way out.
#
#   scripts/demo.sh [BUILD_DIR]      (as root; make demo runs it)
set -euo pipefail

build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=$(cd "$build" && pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "make demo needs root: claimd loads BPF programs (CAP_BPF, CAP_PERFMON," \
		"CAP_SYS_ADMIN). Run: sudo make demo" >&2
	exit 1
fi
for bin in claimd claimctl claimlab; do
	if [ ! -x "$build/$bin" ]; then
		echo "demo: $build/$bin is missing: run make first" >&2
		exit 1
	fi
done
if ! command -v python3 >/dev/null; then
	echo "demo: python3 is needed to put the tables together" >&2
	exit 1
fi

# Sizes: N=2000 lets a 10% budget converge (it earns 0.1 token per request).
T1_N=${T1_N:-2000}
T2_N=${T2_N:-5000}
T5_N=${T5_N:-200}
POLY_N=${POLY_N:-500}
T5_DEPTH=6
CONC=4
SEED=2024

pin=/sys/fs/bpf/claimd-demo
tmp=$(mktemp -d /tmp/claimd-demo.XXXXXX)
ctl=$tmp/control.sock
claimd_pid=
lab_pid=
t0=$SECONDS

cleanup() {
	local rc=$?

	trap - EXIT INT TERM
	if [ -n "$lab_pid" ] && kill -0 "$lab_pid" 2>/dev/null; then
		kill -TERM "$lab_pid" 2>/dev/null || true
		wait "$lab_pid" 2>/dev/null || true
	fi
	if [ -n "$claimd_pid" ] && kill -0 "$claimd_pid" 2>/dev/null; then
		kill -TERM "$claimd_pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$claimd_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$claimd_pid" 2>/dev/null; then
			echo "demo: claimd did not stop within 10 s: killed" >&2
			kill -KILL "$claimd_pid" 2>/dev/null || true
		fi
		wait "$claimd_pid" 2>/dev/null || true
	fi
	# A claimd that was killed leaves its pins: they are ours to remove.
	if [ -d "$pin" ]; then
		rm -f "$pin"/* 2>/dev/null || true
		rmdir "$pin" 2>/dev/null || true
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The tables: reads claimlab's JSON, compares with evaluation.md, and at the
# end writes demo.json. Expected values are the seeds' figures.
cat >"$tmp/demo.py" <<'EOF'
import json, os, sys

tmp = os.environ["DEMO_TMP"]
bad_file = os.path.join(tmp, "misses")


def load(name):
    with open(os.path.join(tmp, name + ".json")) as f:
        return json.load(f)


def miss(what):
    with open(bad_file, "a") as f:
        f.write(what + "\n")
    return "MISS: " + what


def rel_ok(got, want, tol):
    return abs(got - want) <= tol * want


T1 = [
    ("none", "none", [1, 1, 1], "zero", 0),
    ("1 retry per hop", "retry:1", [2, 4, 8], "some", 3),
    ("10% budget per hop", "budget:0.1", [1.1, 1.21, 1.331], "some", 3),
    ("claim-aware, 1 retry", "claim:1", [1, 1, 2], "zero", 1),
    ("claim-aware + 10% budget at C", "claim1-budgetC", [1, 1, 1.1], "zero", 1),
]
T2 = [(0.99, 0.9999, 1.01), (0.90, 0.99, 1.10), (0.80, 0.88, 1.10)]


def t1_head():
    print("  %-30s %-14s %-14s %-16s %-20s %-7s %s" % (
        "policy", "load B", "load C", "load D", "retries sent A / B", "radius", ""))


def t1_row(i):
    label, run, want, retries, radius = T1[i]
    r = load("t1-" + run)
    cells, notes = [], []
    for node, w in zip("BCD", want):
        got = r["load"][node]
        cells.append("%.3f (%g)" % (got, w))
        if not rel_ok(got, w, 0.03):
            notes.append(miss("T1 %s: load at %s %.3f, want %g +-3%%" % (label, node, got, w)))
    a, b = r["retries_sent"]["A"], r["retries_sent"]["B"]
    if (retries == "zero") != (a == 0 and b == 0) or (retries == "some" and (a == 0 or b == 0)):
        notes.append(miss("T1 %s: retries sent by A, B %d, %d, want %s" % (label, a, b,
                                                                            retries)))
    if r["storm_radius"] != radius:
        notes.append(miss("T1 %s: storm radius %d, want %d" % (label, r["storm_radius"],
                                                               radius)))
    if r["claimd_connected_nodes"] != len(r["nodes"]):
        notes.append(miss("T1 %s: only %d nodes read claimd's verdicts" % (
            label, r["claimd_connected_nodes"])))
    print("  %-30s %-14s %-14s %-16s %-20s %-7s %s" % (
        label, cells[0], cells[1], cells[2],
        "%d / %d (%s)" % (a, b, "0" if retries == "zero" else ">0"),
        "%d (%d)" % (r["storm_radius"], radius), "; ".join(notes) or "ok"))


def claims(r, name):
    for n in r["nodes"]:
        if n["name"] == name:
            return n["claims_written"], n["failed_answers"]


def t1_verdicts():
    # What the failed answers carried, straight from claim_current() in each node.
    for i in (3, 4):
        r = load("t1-" + T1[i][1])
        parts = []
        for name in "DCBA":
            c, failed = claims(r, name)
            parts.append("%s %d/%d %s" % (name, max(c["claimed"], c["unclaimed"]), failed,
                                          "claimed" if c["claimed"] >= c["unclaimed"]
                                          else "unclaimed"))
        print("  x-error-claim written (%s): %s" % (T1[i][0], ", ".join(parts)))


def t2_head():
    print("  %-8s %-20s %-18s %-26s %s" % ("base a", "perceived", "load on callee",
                                            "callee failures retried", ""))


def t2_row(i):
    base, want_p, want_l = T2[i]
    r = load("t2-%d" % i)
    p, l = r["client"]["perceived"], r["load"]["B"]
    a = r["nodes"][0]["downstreams"][0]
    notes = []
    if abs(p - want_p) > 0.01:
        notes.append(miss("T2 a=%g: perceived %.4f, want %g +-0.01" % (base, p, want_p)))
    if not rel_ok(l, want_l, 0.03):
        notes.append(miss("T2 a=%g: load %.3f, want %g +-3%%" % (base, l, want_l)))
    # Every failed first attempt is retried or denied by the budget (2 attempts at most).
    failed_first = a["retries"] + a["budget_denied"]
    print("  %-8s %-20s %-18s %-26s %s" % (
        "%g%%" % (base * 100), "%.2f%% (%g%%)" % (100 * p, 100 * want_p),
        "%.3f (%.2f)" % (l, want_l), "%d of %d" % (a["retries"], failed_first),
        "; ".join(notes) or "ok"))


def t5_head():
    print("  %-10s %-14s %-8s %-36s %s" % ("policy", "leaf load", "radius",
                                           "load root .. leaf", "healthy nodes above 1x"))


def t5_row(run, leaf):
    r = load("t5-" + run)
    depth = int(r["topology"].split(":")[1])
    want_leaf, want_radius = (2.0 ** depth, depth) if run == "retry:1" else (2.0, 1)
    path, node = [], leaf
    while True:
        path.insert(0, node)
        if "." not in node:
            break
        node = node.rsplit(".", 1)[0]
    healthy = [n for n in r["nodes"] if n["name"] not in path and n["load"] > 1.0 + 1e-9]
    notes = []
    if not rel_ok(r["fail_load"], want_leaf, 0.03):
        notes.append(miss("T5 %s: leaf load %.2f, want %g +-3%%" % (run, r["fail_load"],
                                                                    want_leaf)))
    if r["storm_radius"] != want_radius:
        notes.append(miss("T5 %s: storm radius %d, want %d" % (run, r["storm_radius"],
                                                               want_radius)))
    if r["claimd_connected_nodes"] != len(r["nodes"]):
        notes.append(miss("T5 %s: only %d nodes read claimd's verdicts" % (
            run, r["claimd_connected_nodes"])))
    print("  %-10s %-14s %-8s %-36s %s" % (
        run, "%.2f (%g)" % (r["fail_load"], want_leaf),
        "%d (%d)" % (r["storm_radius"], want_radius),
        " ".join("%g" % round(r["load"][n], 3) for n in path),
        "%d of %d%s" % (len(healthy), len(r["nodes"]) - len(path),
                        "  " + "; ".join(notes) if notes else "  ok")))


POLY = [("claim-aware, 1 retry", "claim", 2.0), ("1 retry per hop", "naive", 8.0)]


def poly_head():
    print("  %-30s %-10s %-10s %-10s %-16s %s" % ("policy", "load A", "load B", "load C",
                                                   "load D", "answers to the client"))


def poly_rows():
    runs = load("poly")
    for label, key, want in POLY:
        r = runs[key]
        n = r["requests"]
        notes = []
        if not rel_ok(r["d_load"], want, 0.03):
            notes.append(miss("T1 polyglot %s: D's load %.2f, want %g +-3%%" % (
                label, r["d_load"], want)))
        if r["answers"].get("502 unclaimed", 0) != n:
            notes.append(miss("T1 polyglot %s: answers %s, want %d x '502 unclaimed'" % (
                label, r["answers"], n)))
        print("  %-30s %-10s %-10s %-10s %-16s %s  %s" % (
            label, "%.2f" % (r["counts"]["A"] / n), "%.2f" % (r["counts"]["B"] / n),
            "%.2f" % (r["counts"]["C"] / n), "%.2f (%g)" % (r["d_load"], want),
            ", ".join("%d x %s" % (c, a) for a, c in sorted(r["answers"].items())),
            "; ".join(notes) or "ok"))


def assemble(out, leaf):
    doc = {"T1": [], "T2": [], "T5": [], "T1_polyglot": []}
    for label, run, _, _, _ in T1:
        r = load("t1-" + run)
        doc["T1"].append({"policy": r["policy"], "load": r["load"],
                          "retries_sent": r["retries_sent"],
                          "storm_radius": r["storm_radius"]})
    for i, (base, _, _) in enumerate(T2):
        r = load("t2-%d" % i)
        doc["T2"].append({"base": base, "perceived": r["client"]["perceived"],
                          "load": r["load"]["B"]})
    for run in ("retry:1", "claim:1"):
        r = load("t5-" + run)
        doc["T5"].append({"policy": r["policy"], "load": r["load"],
                          "leaf_load": r["fail_load"], "storm_radius": r["storm_radius"]})
    runs = load("poly")
    for label, key, _ in POLY:
        r = runs[key]
        doc["T1_polyglot"].append({"policy": label, "requests": r["requests"],
                                   "served": r["counts"], "services": r["services"],
                                   "leaf_load": r["d_load"]})
    with open(out + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(out + ".tmp", out)


cmd = sys.argv[1]
if cmd == "poly-head":
    poly_head()
elif cmd == "poly-rows":
    poly_rows()
elif cmd == "t1-head":
    t1_head()
elif cmd == "t1-row":
    t1_row(int(sys.argv[2]))
elif cmd == "t1-verdicts":
    t1_verdicts()
elif cmd == "t2-head":
    t2_head()
elif cmd == "t2-row":
    t2_row(int(sys.argv[2]))
elif cmd == "t5-head":
    t5_head()
elif cmd == "t5-row":
    t5_row(sys.argv[2], sys.argv[3])
elif cmd == "assemble":
    assemble(sys.argv[2], sys.argv[3])
EOF
export DEMO_TMP=$tmp
table() {
	python3 "$tmp/demo.py" "$@"
}

# claimlab run NAME ARGS...: results in $tmp/NAME.json, its output in $tmp/NAME.log.
lab() {
	local name=$1 rc=0

	shift
	"$build/claimlab" run --json "$tmp/$name.json" --concurrency "$CONC" --seed "$SEED" "$@" \
		>"$tmp/$name.log" 2>&1 &
	lab_pid=$!
	wait "$lab_pid" || rc=$?
	lab_pid=
	if [ "$rc" -ne 0 ]; then
		echo "demo: claimlab run $* failed (exit $rc):" >&2
		tail -n 40 "$tmp/$name.log" >&2
		exit 1
	fi
}

echo "== claimd: starting, pin directory $pin"
mkdir -p "$tmp/state"
"$build/claimd" --pin-dir "$pin" --control "$ctl" --state-dir "$tmp/state" \
	>"$tmp/claimd.log" 2>&1 &
claimd_pid=$!
for i in $(seq 200); do
	if ! kill -0 "$claimd_pid" 2>/dev/null; then
		claimd_pid=
		echo "demo: claimd exited during start:" >&2
		cat "$tmp/claimd.log" >&2
		exit 1
	fi
	if "$build/claimctl" --socket "$ctl" status >/dev/null 2>&1; then
		break
	fi
	if [ "$i" -eq 200 ]; then
		echo "demo: claimd did not answer on $ctl within 20 s:" >&2
		cat "$tmp/claimd.log" >&2
		exit 1
	fi
	sleep 0.1
done
export CLAIMD_VERDICTS=$pin/verdicts
echo "   attached in $((SECONDS - t0)) s; nodes read verdicts from $CLAIMD_VERDICTS"

echo
echo "== T1: load amplification along A -> B -> C -> D -> E -> F -> G; D fails every request"
echo "   N=$T1_N requests, $CONC connections; measured (expected: (1+R)^d per hop, (1+B)^d"
echo "   with per-hop budgets, retries only at the edge nearest the failure when claim-aware)"
table t1-head
t=$SECONDS
chain=(--topology chain:7 --fail D --requests "$T1_N")
lab t1-none "${chain[@]}" --policy none
table t1-row 0
lab t1-retry:1 "${chain[@]}" --policy retry:1
table t1-row 1
lab t1-budget:0.1 "${chain[@]}" --policy budget:0.1
table t1-row 2
lab t1-claim:1 "${chain[@]}" --policy claim:1
table t1-row 3
lab t1-claim1-budgetC "${chain[@]}" --policy claim:1 --policy-at C=claim+budget:0.1
table t1-row 4
table t1-verdicts
echo "   ($((SECONDS - t)) s)"

echo
echo "== T2: caller -> callee failing independently with probability 1-a; 1 retry within a"
echo "   10% budget (claim+budget:0.1), N=$T2_N, seed $SEED; measured (expected)"
table t2-head
t=$SECONDS
i=0
for rate in 0.01 0.10 0.20; do
	lab "t2-$i" --topology chain:2 --service-prefix T2- --fail B --fail-rate "$rate" \
		--requests "$T2_N" --policy claim+budget:0.1
	table t2-row "$i"
	i=$((i + 1))
done
echo "   ($((SECONDS - t)) s)"

leaf=n0$(printf '.1%.0s' $(seq "$T5_DEPTH"))
echo
echo "== T5: fan-out tree, depth $T5_DEPTH, fan-out 2 ($((2 ** (T5_DEPTH + 1) - 1)) nodes);" \
	"leaf $leaf fails; N=$T5_N"
echo "   measured (expected: 2^$T5_DEPTH at the leaf and radius $T5_DEPTH per hop; 2 and 1" \
	"claim-aware)"
table t5-head
t=$SECONDS
for policy in retry:1 claim:1; do
	lab "t5-$policy" --topology "tree:$T5_DEPTH:2" --fail "$leaf" --requests "$T5_N" \
		--policy "$policy"
	table t5-row "$policy" "$leaf"
done
echo "   ($((SECONDS - t)) s)"

echo
echo "== T1 polyglot: A (Python, Flask) -> B (Go) -> C (Java) -> D (C), each hop a real"
echo "   service using only libclaim's package for its language; D fails every request;"
echo "   N=$POLY_N, 8 in flight; loads from the services' own counters (expected)"
table poly-head
t=$SECONDS
if ! python3 "$top/tests/peers/polyglot_storm.py" --build "$build" --requests "$POLY_N" \
	>"$tmp/poly.json" 2>"$tmp/poly.log"; then
	echo "demo: the polyglot storm failed:" >&2
	cat "$tmp/poly.log" >&2
	exit 1
fi
table poly-rows
echo "   ($((SECONDS - t)) s)"

echo
echo "== claimctl edges (what claimd learned during the demo; it watches the whole host)"
"$build/claimctl" --socket "$ctl" edges

table assemble "$build/demo.json" "$leaf"
echo
echo "== wrote ${build#"$top"/}/demo.json; $((SECONDS - t0)) s in all"
if [ -s "$tmp/misses" ]; then
	echo "== $(wc -l <"$tmp/misses") figure(s) missed their target:"
	sed 's/^/   /' "$tmp/misses"
	exit 1
fi
echo "== every figure within its target (T1, T1 polyglot, T5: 3%; T2: 1 point, load 3%)"
