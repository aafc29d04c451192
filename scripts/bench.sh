#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench: what claimd costs the host, all measured in this run.
#
#  1. throughput of a thread-per-request service (a claimlab node) under wrk
#     at saturation, with claimd attached and not, alternating (each ratio
#     the median of the rounds' own, with their spread); and with only the
#     floor of a traced request attached (see 3b);
#  2. p50/p99 latency at a fixed rate below saturation (paced client),
#     with claimd settled, and while it starts;
#  3. kernel time per program run (kernel.bpf_stats_enabled=1): for an
#     untraced process hammering a pipe, and per request of the traced
#     service (claimd following only that service), paced and at
#     saturation (alternating rounds), beside the floor any framing
#     observer pays there;
#  4. the in-kernel framing of one message head (BPF_PROG_TEST_RUN); the
#     untraced process's program time against an empty program's and one
#     that loads one word of its own, rounds alternating, medians, over TCP
#     and over a socket file; a traced
#     request that makes one Redis call;
#  5. libclaim's claim_current() per call, and each language package's
#     lookup (go/claim, the Java jar, python/libclaim, node/); the
#     explicit context's enter and leave, probed;
#  6. claimd's CPU share and peak RSS at a fixed request rate;
#  7. requests counted at a high rate (80,000 req/s asked): none may be lost;
#  8. throughput as in 1, with the service behind one nginx reverse-proxy hop
#     (a sidecar: followed by nginx's own tier; then, with it turned off,
#     as the relay of each request, and tied by a traceparent each request
#     carries), behind a Node.js proxy (followed as a relay), with the
#     uprobe runs each takes, and of a service doing ~100 us of CPU work
#     per request;
#  9. claimd's CPU at rest once real traffic has taught it 1,000 and then
#     10,000 edges (tests/peers/edge_fan), its metrics served as by default.
# Prints a table and writes build/bench.json. Needs root.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (claimd loads BPF programs)" >&2; exit 1; }

ROUNDS=${BENCH_ROUNDS:-5}      # alternating off/on runs for throughput and latency
WRK_SECONDS=${BENCH_WRK_SECONDS:-4}
PACE_SECONDS=${BENCH_PACE_SECONDS:-5}
SETTLE_SECONDS=${BENCH_SETTLE_SECONDS:-2} # from claimd's attach to a latency round with it
UNTRACED_ROUNDS=${BENCH_UNTRACED_ROUNDS:-5} # alternating rounds of the untraced figure and its floor
IDLE_SECONDS=${BENCH_IDLE_SECONDS:-10} # quiet interval of each idle-CPU figure
EDGE_WAIT=${BENCH_EDGE_WAIT:-30}       # longest wait for claimd to know the edges made

tmp=$(mktemp -d /tmp/claimd-bench.XXXXXX)
pin=/sys/fs/bpf/claimd-bench-$$
node_pid= nodejs_pid= claimd_pid= ngx_pid= work_pid= dep_pid= redis_pid= fan_pids=()
claimd_metrics=none
stats_was=$(sysctl -n kernel.bpf_stats_enabled)

cleanup() {
	stop_pids "$node_pid" "$nodejs_pid" "$ngx_pid" "$work_pid" "$dep_pid" "$redis_pid" "${fan_pids[@]}"
	bench_cleanup
}
trap cleanup EXIT INT TERM

# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# The service: a claimlab node, thread per connection, no downstream.
CLAIMD_SERVICE=benchsvc "$build/claimlab" node --name benchsvc --ready "$tmp/ready" \
	>"$tmp/node.log" 2>&1 &
node_pid=$!
for _ in $(seq 100); do [ -s "$tmp/ready" ] && break; sleep 0.05; done
port=$(cat "$tmp/ready")
mkdir -p "$tmp/state"
say "== claimd benchmark: service benchsvc (claimlab node, pid $node_pid) on 127.0.0.1:$port"

# 1. Throughput at saturation: without claimd, with it, and with the floor
#    of a traced request alone (floor_traced, no claimd; see 3b), on the
#    same traffic as claimd: claimd follows the whole host, so wrk's calls
#    too, and the floor follows the node's reads and writes and wrk's
#    (--and-command). Each round runs the three back to back, the two
#    traced ones in turn first, and both ratios are over the same round's
#    run without: the gap between them is claimd's over the floor, not the
#    host's drift between two runs without.
node_off=() node_on=() floor_on=()
for r in $(seq "$ROUNDS"); do
	node_off+=("$(wrk_rps)")
	if [ $((r % 2)) -eq 0 ]; then
		floor_on+=("$(wrk_rps "$port" "$build/tests/parse_bench" --traced "$node_pid" --and-command)")
	fi
	claimd_start
	node_on+=("$(wrk_rps)")
	claimd_stop
	if [ $((r % 2)) -eq 1 ]; then
		floor_on+=("$(wrk_rps "$port" "$build/tests/parse_bench" --traced "$node_pid" --and-command)")
	fi
	say "   round $r, the node: ${node_off[-1]} req/s without claimd, ${node_on[-1]} with," \
		"${floor_on[-1]} with the floor alone"
done
rps_off=$(median "${node_off[@]}") rps_on=$(median "${node_on[@]}")
read -r ratio ratio_min ratio_max < <(ratio_spread "${node_on[@]}" -- "${node_off[@]}")
read -r floor_ratio floor_ratio_min floor_ratio_max < <(ratio_spread "${floor_on[@]}" -- "${node_off[@]}")
# claimd's run over the floor's in each round (adjacent runs, no run without
# between them to add its own noise): the same question, asked once.
read -r over_floor over_floor_min over_floor_max < <(ratio_spread "${node_on[@]}" -- "${floor_on[@]}")

# 2. Latency at a fixed rate below saturation (40% of it, at most 10000/s):
#    without claimd; while claimd starts (its programs loaded, verified and
#    attached, its first look for files to probe: the kernel's work for it
#    stalls the host's processes for milliseconds, once); and with claimd
#    running, from SETTLE_SECONDS after its start on. The window without
#    comes first in odd rounds and last in even ones (SETTLE_SECONDS after
#    claimd's end: its maps are freed after it exits), so that a host
#    drifting over a round moves both alike.
rate=$(python3 -c "print(int(min(10000, 0.4 * $rps_off)))")
p50_off=() p99_off=() p50_on=() p99_on=() p99_start=()
pace_off() {
	local j
	j=$(pace "$rate" "$PACE_SECONDS")
	p50_off+=("$(echo "$j" | json 'd["p50_us"]')") p99_off+=("$(echo "$j" | json 'd["p99_us"]')")
}
for r in $(seq "$ROUNDS"); do
	[ $((r % 2)) -eq 1 ] && pace_off
	claimd_launch
	j=$(pace "$rate" "$PACE_SECONDS")
	p99_start+=("$(echo "$j" | json 'd["p99_us"]')")
	claimd_wait "$tmp/ctl.sock" "$claimd_pid" "$tmp/claimd.log"
	sleep "$SETTLE_SECONDS"
	j=$(pace "$rate" "$PACE_SECONDS")
	p50_on+=("$(echo "$j" | json 'd["p50_us"]')") p99_on+=("$(echo "$j" | json 'd["p99_us"]')")
	claimd_stop
	[ $((r % 2)) -eq 0 ] && { sleep "$SETTLE_SECONDS"; pace_off; }
	say "   round $r at $rate req/s: p99 ${p99_off[-1]} us without, ${p99_on[-1]} us with," \
		"${p99_start[-1]} us while claimd starts"
done
p50o=$(median "${p50_off[@]}") p99o=$(median "${p99_off[@]}")
p50n=$(median "${p50_on[@]}") p99n=$(median "${p99_on[@]}") p99s=$(median "${p99_start[@]}")
read -r p99_ratio p99_ratio_min p99_ratio_max < <(ratio_spread "${p99_on[@]}" -- "${p99_off[@]}")

# 3. What claimd costs a process it does not follow, and kernel time per
#    program run. pipe_hammer (best of five rounds, wall time per syscall):
#    one-byte writes and reads on a pipe (no program of claimd's runs: its
#    bytes come from the socket tracepoints), on a loopback TCP connection
#    (the program runs and leaves at its filter), and getppid() (no program:
#    what any syscall tracepoint costs every syscall). Without claimd, then
#    with it (--pid: the hammer is not followed), kernel.bpf_stats_enabled
#    off; then with the stats on, the program's time per run over the TCP
#    hammer's syscalls, and its runs during the pipe hammer's (others').
hammer() { "$build/tests/pipe_hammer" "$1" "$2" | json 'd["ns_per_syscall"]'; }
declare -A hn=([getppid]=500000 [pipe]=200000 [tcp]=30000 [unix]=30000) bare=() with=()
for m in getppid pipe tcp unix; do bare[$m]=$(hammer "${hn[$m]}" "$m"); done
claimd_start --pid "$node_pid"
for m in getppid pipe tcp unix; do with[$m]=$(hammer "${hn[$m]}" "$m"); done
say "   an untraced process's syscall (ns, without / with claimd): getppid ${bare[getppid]} /" \
	"${with[getppid]}, pipe ${bare[pipe]} / ${with[pipe]}, TCP ${bare[tcp]} / ${with[tcp]}," \
	"Unix ${bare[unix]} / ${with[unix]}"
sysctl -qw kernel.bpf_stats_enabled=1
# tp_io_x's time per run over the hammer's syscalls (claimd attached), TCP
# unless a mode is given.
untraced_ns_per_run() {
	local t0 c0 t1 c1 mode=${1:-tcp}
	read -r t0 c0 < <(status | prog_totals tp_io_x)
	hammer "${hn[$mode]}" "$mode" >/dev/null
	read -r t1 c1 < <(status | prog_totals tp_io_x)
	python3 -c "print(round(($t1 - $t0) / max(1, $c1 - $c0), 1))"
}
untraced=$(untraced_ns_per_run)
read -r t0 c0 < <(status | prog_totals tp_io_x)
hammer "${hn[pipe]}" pipe >/dev/null
read -r t1 c1 < <(status | prog_totals tp_io_x)
pipe_runs=$((c1 - c0))
# Program time of all claimd's programs per request it counted while a
# command runs (its output dropped).
ns_per_request() {
	local t0 c0 t1 c1 r0 r1
	read -r t0 c0 < <(status | prog_totals)
	r0=$(status | json 'd["kernel"]["requests_counted"]')
	"$@" >/dev/null
	sleep 0.2
	read -r t1 c1 < <(status | prog_totals)
	r1=$(status | json 'd["kernel"]["requests_counted"]')
	python3 -c "print(round(($t1 - $t0) / max(1, $r1 - $r0), 1))"
}
traced=$(ns_per_request pace "$rate" "$PACE_SECONDS")
claimd_stop
# 3b. The floor of a traced request: floor_traced (bpf/parsebench.bpf.c),
#     alone, over the same paced requests: on each of the node's socket
#     reads and writes the task, its registers, one copy of the first bytes
#     and one clock read, what any observer that frames them must do; the
#     client's syscalls leave after the task is compared.
floor=$("$build/tests/parse_bench" --traced "$node_pid" /bin/sh -c \
	"\"$build/tests/paced_client\" -p $port -r $rate -d $PACE_SECONDS -c 8 >$tmp/floor_pace.json")
floor_ok=$(json 'd["ok"]' <"$tmp/floor_pace.json")
traced_floor=$(echo "$floor" | json "round(d['traced_floor_run_time_ns'] / max(1, $floor_ok), 1)")
# 3c. The traced request and its floor at saturation (wrk, as for
#     throughput: no halts between requests), in ROUNDS alternating pairs:
#     claimd following the node, settled, then the floor alone. The ratio is
#     the median of the pairs' own (the host's phases, which move both by a
#     third, stay out of each), with its spread.
floor_sat_ns() {
	local f n
	f=$("$build/tests/parse_bench" --traced "$node_pid" /bin/sh -c \
		"wrk -t2 -c32 -d${WRK_SECONDS}s http://127.0.0.1:$port/r/1 >$tmp/floor_wrk.txt")
	n=$(awk '/requests in/ {print $1}' "$tmp/floor_wrk.txt")
	echo "$f" | json "round(d['traced_floor_run_time_ns'] / max(1, ${n:-0}), 1)"
}
traced_sat_rounds=() floor_sat_rounds=()
for r in $(seq "$ROUNDS"); do
	claimd_start --pid "$node_pid"
	sleep "$SETTLE_SECONDS"
	traced_sat_rounds+=("$(ns_per_request wrk_rps)")
	claimd_stop
	floor_sat_rounds+=("$(floor_sat_ns)")
	say "   round $r at saturation: a traced request ${traced_sat_rounds[-1]} ns," \
		"its floor ${floor_sat_rounds[-1]} ns"
done
traced_sat=$(median "${traced_sat_rounds[@]}") traced_floor_sat=$(median "${floor_sat_rounds[@]}")
read -r sat_over_floor sat_over_floor_min sat_over_floor_max < \
	<(ratio_spread "${traced_sat_rounds[@]}" -- "${floor_sat_rounds[@]}")
say "   a traced request: $traced ns of program time paced, $traced_sat at saturation;" \
	"the floor $traced_floor ns paced, $traced_floor_sat at saturation (medians)"
sysctl -qw kernel.bpf_stats_enabled="$stats_was"

# 4. Framing of one head in the kernel, and the floors: an empty program on
#    the socket tracepoints, and one that loads a word of its own there,
#    over the same TCP hammer as the untraced figure.
sysctl -qw kernel.bpf_stats_enabled=1
parse=$("$build/tests/parse_bench" "$build/tests/pipe_hammer" "${hn[tcp]}" tcp)
# 4a. The untraced figure (3) and those floors differ by less than this
#     host's phases move either from one minute to the next: more
#     rounds of each, alternating (claimd following the node, then the two
#     floors alone), and the medians over all.
# mode rounds: that many more alternating rounds over the hammer of mode,
# appended to the arrays runs (claimd's tp_io_x per run) and floors.
# load_floors: the same hammer's floor_sock_load (one load of a word of its
# own: the least a filter with state pays, bpf/parsebench.bpf.c).
untraced_rounds() {
	local f
	for _ in $(seq "$2"); do
		claimd_start --pid "$node_pid"
		runs+=("$(untraced_ns_per_run "$1")")
		claimd_stop
		f=$("$build/tests/parse_bench" "$build/tests/pipe_hammer" "${hn[$1]}" "$1")
		floors+=("$(echo "$f" | json 'd["empty_program_ns"]')")
		load_floors+=("$(echo "$f" | json 'd["one_load_program_ns"]')")
	done
}
runs=("$untraced") floors=("$(echo "$parse" | json 'd["empty_program_ns"]')")
load_floors=("$(echo "$parse" | json 'd["one_load_program_ns"]')")
untraced_rounds tcp $((UNTRACED_ROUNDS - 1))
untraced_runs=("${runs[@]}") floor_runs=("${floors[@]}") load_floor_runs=("${load_floors[@]}")
untraced=$(median "${untraced_runs[@]}") empty_floor=$(median "${floor_runs[@]}")
load_floor=$(median "${load_floor_runs[@]}")
say "   an untraced TCP syscall's program: $untraced ns against the empty program's $empty_floor" \
	"and one load's $load_floor (medians; rounds ${untraced_runs[*]} against" \
	"${floor_runs[*]} and ${load_floor_runs[*]})"
# 4b. The same over a socket file's connection (journald's, D-Bus's and
#     X11's clients talk so): claimd follows a Unix socket only for the
#     processes it follows, and lets the others' go at its filter.
runs=() floors=() load_floors=()
untraced_rounds unix "$UNTRACED_ROUNDS"
unix_runs=("${runs[@]}") unix_floor_runs=("${floors[@]}") unix_load_floor_runs=("${load_floors[@]}")
untraced_unix=$(median "${unix_runs[@]}") unix_floor=$(median "${unix_floor_runs[@]}")
unix_load_floor=$(median "${unix_load_floor_runs[@]}")
say "   an untraced Unix socket syscall's program: $untraced_unix ns against the empty" \
	"program's $unix_floor and one load's $unix_load_floor (medians; rounds ${unix_runs[*]}" \
	"against ${unix_floor_runs[*]} and ${unix_load_floor_runs[*]})"
sysctl -qw kernel.bpf_stats_enabled="$stats_was"

# 4c. A Redis call's program time: tests/peers/dep_service.py (a threaded
#     Python service, redis-py, keep-alive) calling redis-server over its
#     socket file, paced, claimd following only it; all programs' time per
#     request, with the call and without it (--no-call), and the calls
#     claimd framed per request. What a call adds is the difference.
redis-server --port 0 --unixsocket "$tmp/redis.sock" --save "" --appendonly no \
	>"$tmp/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do [ -S "$tmp/redis.sock" ] && break; sleep 0.05; done
# [dep_service.py option]: run_ns (per request) and run_calls (framed per request).
redis_run() {
	local c0 r0 c1 r1
	rm -f "$tmp/dep.ready"
	CLAIMD_SERVICE=benchdep /usr/bin/python3 "$(dirname "$0")/../tests/peers/dep_service.py" \
		--dep redis --addr "$tmp/redis.sock" --dep-fail-mod 0 --keepalive \
		--ready-file "$tmp/dep.ready" "$@" >"$tmp/dep.log" 2>&1 &
	dep_pid=$!
	wait_file "$tmp/dep.ready" "$dep_pid" "the Redis-calling service"
	claimd_start --pid "$dep_pid"
	c0=$(status | json 'd["kernel"]["dependency_calls"]')
	r0=$(status | json 'd["kernel"]["requests_counted"]')
	run_ns=$(port=$(cat "$tmp/dep.ready") && ns_per_request pace 200 "$PACE_SECONDS")
	c1=$(status | json 'd["kernel"]["dependency_calls"]')
	r1=$(status | json 'd["kernel"]["requests_counted"]')
	claimd_stop
	stop_pids "$dep_pid"
	dep_pid=
	run_calls=$(python3 -c "print(round(($c1 - $c0) / max(1, $r1 - $r0), 3))")
}
sysctl -qw kernel.bpf_stats_enabled=1
redis_run
redis_ns=$run_ns redis_calls=$run_calls
redis_run --no-call
nocall_ns=$run_ns
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
stop_pids "$redis_pid"
redis_pid=
redis_call_ns=$(python3 -c "print(round($redis_ns - $nocall_ns, 1))")
say "   a Redis call: $redis_call_ns ns of program time (requests $redis_ns ns with it," \
	"$nocall_ns without; $redis_calls calls framed per request)"

# 4d. A request head written with one writev of N entries (1, 8, 64: the
#     bound framed per syscall): the read/write program's time per request
#     of the hammer (its four syscalls: the writev, the head read, the
#     answer written and read; one program follows them all). What 8 and 64
#     pieces cost over 1 is what the pieces cost.
sysctl -qw kernel.bpf_stats_enabled=1
claimd_start
iov_ns=() iov_requests=20000
for seg in 1 8 64; do
	read -r t0 c0 < <(status | prog_totals tp_io_x)
	"$build/tests/iov_hammer" "$seg" "$iov_requests" >/dev/null
	read -r t1 c1 < <(status | prog_totals tp_io_x)
	iov_ns+=("$(python3 -c "print(round(($t1 - $t0) / $iov_requests, 1))")")
	say "   a head written in $seg pieces: ${iov_ns[-1]} ns of program time per request"
done
claimd_stop
sysctl -qw kernel.bpf_stats_enabled="$stats_was"

# 5. claim_current(), with claimd's verdict map live.
claimd_start
lookup=$(CLAIMD_VERDICTS="$pin/verdicts" "$build/tests/claim_bench" 20000000)
connected=$(echo "$lookup" | json 'd["connected"]')
[ "$connected" = 1 ] || { say "bench: libclaim did not see claimd's map"; exit 1; }
# The same lookup from each language's package, on an idle thread as above.
lang_env=(CLAIMD_VERDICTS="$pin/verdicts" CLAIMD_LIBCLAIM="$build/libclaim.so"
	CLAIMD_NODE_ADDON="$build/node/claim.node" PYTHONPATH="$top/python")
declare -A lang_lookup
lang_lookup[go]=$(env "${lang_env[@]}" "$build/tests/go/claimsvc" bench -n 20000000)
lang_lookup[java]=$(env "${lang_env[@]}" java -cp \
	"$build/tests/java:$build/java/libclaim.jar:/usr/share/java/jna.jar" ClaimBench 20000000)
lang_lookup[python]=$(env "${lang_env[@]}" /usr/bin/python3 "$top/tests/peers/claim_bench.py" 1000000)
lang_lookup[node]=$(env "${lang_env[@]}" node "$top/tests/peers/claim_bench.js" "$top/node" 5000000)
for l in go java python node; do
	[ "$(echo "${lang_lookup[$l]}" | json 'd["connected"]')" = 1 ] ||
		{ say "bench: $l's package did not see claimd's map"; exit 1; }
	say "   a lookup from $l: $(echo "${lang_lookup[$l]}" | json 'd["ns_per_call"]') ns"
done
# 5b. The explicit context: claim_context_enter() and claim_context_leave()
#     in a process claimd follows (it listens), each a hit of claimd's
#     probe; timed once claimd's log says its executable (linked with
#     libclaim.a) is probed, 30 s at most. (A lookup run above may have
#     had it probed already: the probes are the file's.)
context_probed="probing claim_context_enter/leave in $(realpath "$build/tests/claim_bench")"
mkfifo "$tmp/context.go"
"$build/tests/claim_bench" --context 20000 <"$tmp/context.go" >"$tmp/context.json" &
context_pid=$!
exec {context_go}>"$tmp/context.go"
for _ in $(seq 120); do
	grep -qF "$context_probed" "$tmp/claimd.log" && break
	kill -0 "$context_pid" 2>/dev/null || break
	sleep 0.25
done
grep -qF "$context_probed" "$tmp/claimd.log" ||
	{ say "bench: claimd did not probe claim_bench's claim_context_enter"; exit 1; }
echo go >&"$context_go"
exec {context_go}>&-
wait "$context_pid"
context_pair_ns=$(json 'd["ns_per_pair"]' <"$tmp/context.json")
say "   claim_context_enter() and _leave(), probed: $context_pair_ns ns a pair"

# 6. claimd's CPU and memory at 5000 requests per second (claimd following everything).
cpu0=$(cpu_ns)
w0=$(date +%s.%N)
j=$(pace 5000 10)
w1=$(date +%s.%N)
cpu1=$(cpu_ns)
cpu_share=$(python3 -c "print(round(($cpu1 - $cpu0) / 1e9 / ($w1 - $w0), 5))")
rss=$(awk '/VmHWM/ {print $2}' "/proc/$claimd_pid/status")
rss_mib=$(python3 -c "print(round($rss / 1024, 1))")
achieved5k=$(echo "$j" | json 'd["achieved_rps"]')

# 7. Counts under load: the node asked for 80,000 req/s (it answers what it
#    can), claimd following everything. Every answered request must be in
#    the node's counts, whatever the rate, and every one of the client's
#    calls (root calls) in the kernel's root-call count; records flow for
#    neither (the ring buffer's drops are reported beside).
services_requests() { ctl services --json | json 'sum(s["requests"] for s in d)'; }
n0=$(services_requests)
d0=$(status | json 'd["kernel"]["ringbuf_drops"]')
c0=$(status | json 'd["kernel"]["root_calls_counted"]')
j=$(pace 80000 4)
sleep 0.5
n1=$(services_requests)
d1=$(status | json 'd["kernel"]["ringbuf_drops"]')
c1=$(status | json 'd["kernel"]["root_calls_counted"]')
load_ok=$(echo "$j" | json 'd["ok"]')
load_rps=$(echo "$j" | json 'd["achieved_rps"]')
counts_lost=$((load_ok - (n1 - n0)))
root_counted=$((c1 - c0))
rb_drops=$((d1 - d0))
say "   asked 80000 req/s: $load_rps answered per s, $load_ok in all; $((n1 - n0)) counted," \
	"$counts_lost lost; the client's calls: $root_counted counted; $rb_drops records dropped"
claimd_stop

# 8a. The same node behind one nginx reverse-proxy hop (a sidecar): nginx
#     from Debian with a config of our own, keep-alive to the node, a worker
#     per core. wrk talks to nginx; with claimd, both hops are traced.
ngx=$tmp/nginx ngx_port=$(free_port) ngx_workers=$(nproc)
mkdir -p "$ngx/logs"
cat >"$ngx/nginx.conf" <<EOF
worker_processes $ngx_workers;
daemon off;
master_process on;
pid $ngx/nginx.pid;
error_log $ngx/logs/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $ngx/body;
	proxy_temp_path $ngx/proxy;
	fastcgi_temp_path $ngx/fastcgi;
	uwsgi_temp_path $ngx/uwsgi;
	scgi_temp_path $ngx/scgi;
	upstream benchsvc {
		server 127.0.0.1:$port;
		keepalive 64;
	}
	server {
		listen 127.0.0.1:$ngx_port;
		location / {
			proxy_pass http://benchsvc;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
EOF
nginx -p "$ngx" -c "$ngx/nginx.conf" -e "$ngx/logs/error.log" >"$ngx/logs/out.log" 2>&1 &
ngx_pid=$!
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/127.0.0.1/$ngx_port") 2>/dev/null && break
	kill -0 "$ngx_pid" 2>/dev/null || { cat "$ngx/logs/"*.log >&2; say "bench: nginx did not start"; exit 1; }
	sleep 0.05
done
via=$(python3 -c '
import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).status)
except Exception as e:
    print(e)' "http://127.0.0.1:$ngx_port/r/1")
[ "$via" = 200 ] || { cat "$ngx/logs/error.log" >&2; say "bench: GET through nginx: $via"; exit 1; }
say "== nginx (pid $ngx_pid, $ngx_workers workers) on 127.0.0.1:$ngx_port in front of benchsvc"
# The same hop with requests nginx is followed as the relay of (bpf/keyed.c):
# each its own target, with a user agent. Each wrk thread's Lua state names
# its targets by a table's address, so no two threads ask the same.
cat >"$tmp/relay.lua" <<'LUA'
local n, me = 0, tostring({}):match("0x(%x+)") or tostring(math.random(1e9))
request = function()
	n = n + 1
	return wrk.format("GET", "/r/" .. me .. "-" .. n, { ["User-Agent"] = "bench/1.0" })
end
LUA
ties() {
	status | json '" ".join(str(v) for v in (d["kernel"]["calls_tied_by_relay"],
		d["kernel"]["calls_tied_by_id"],
		d["kernel"]["calls_tied_by_nginx"] + d["kernel"]["calls_tied_by_node"],
		d["kernel"]["calls_tie_ambiguous"], d["kernel"]["calls_tie_none"],
		d["kernel"]["event_loop_requests"]))'
}
# Uprobe runs (OpenSSL's, libclaim context's, Go's, nginx's, Node's programs): an
# event loop followed by what it relays or carries pays none.
uprobe_runs() {
	status | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(p["run_cnt"] for p in d["programs"]
          if p["name"].startswith(("tls_", "ctx_", "go_", "nginx_", "node_"))))'
}
# One wrk run at $1 with WRK_SCRIPT, claimd attached, its program runs
# counted: "keyed tied_relay tied_id tied_by_probe ambiguous none uprobe_runs" (a
# probe's: nginx's or Node's tier).
tied_run() {
	local tr0 ti0 tg0 ta0 tn0 tk0 u0 tr1 ti1 tg1 ta1 tn1 tk1 u1
	claimd_start
	sysctl -qw kernel.bpf_stats_enabled=1
	read -r tr0 ti0 tg0 ta0 tn0 tk0 < <(ties)
	u0=$(uprobe_runs)
	wrk_rps "$1" >/dev/null
	read -r tr1 ti1 tg1 ta1 tn1 tk1 < <(ties)
	u1=$(uprobe_runs)
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	claimd_stop
	echo "$((tk1 - tk0)) $((tr1 - tr0)) $((ti1 - ti0)) $((tg1 - tg0)) $((ta1 - ta0))" \
		"$((tn1 - tn0)) $((u1 - u0))"
}
# A hop of an event loop at port $2, driven by the wrk script $3 ($4 says
# what): its throughput off and on (throughput_off_on), then one run with
# its ties counted (tied_run); claimd with $CLAIMD_ARGS. Sets <name>_rps_off,
# _rps_on, _ratio, _spread, _keyed, _tied (by relay, id or a runtime's tier),
# _ambiguous, _none and _uprobes.
tied_hop() { # name port script label
	local keyed relay id ngx ambiguous none uprobes
	WRK_SCRIPT=$3 throughput_off_on "$2" "$4"
	read -r keyed relay id ngx ambiguous none uprobes < <(WRK_SCRIPT=$3 tied_run "$2")
	printf -v "${1}_rps_off" %s "$off_rps"
	printf -v "${1}_rps_on" %s "$on_rps"
	printf -v "${1}_ratio" %s "$on_ratio"
	printf -v "${1}_spread" %s "[$on_ratio_min, $on_ratio_max]"
	printf -v "${1}_keyed" %s "$keyed"
	printf -v "${1}_tied" %s "$((relay + id + ngx))"
	printf -v "${1}_ambiguous" %s "$ambiguous"
	printf -v "${1}_none" %s "$none"
	printf -v "${1}_uprobes" %s "$uprobes"
	say "   $4: $keyed requests keyed, their calls $relay tied by relay, $id by id," \
		"$ngx by a runtime's tier, $ambiguous ambiguous, $none tied to none; $uprobes uprobe runs"
}
# Plain requests (no user agent, no id): tied by nginx's own tier
# (bpf/runtimes/nginx.c), one uprobe run per call.
tied_hop ngx "$ngx_port" "" "behind nginx"
# The tiers any event loop gets, measured on nginx with its own turned off.
CLAIMD_ARGS=--no-nginx tied_hop relay "$ngx_port" "$tmp/relay.lua" \
	"behind nginx (--no-nginx), relayed requests"
# The same hop, each request carrying a W3C traceparent of its own (an
# instrumented client), which nginx passes on: its calls tied by that id
# (bpf/keyed.c), no user agent to relay by.
cat >"$tmp/traceparent.lua" <<'LUA'
local n, me = 0, tostring({}):match("0x(%x+)") or tostring(math.random(1e9))
request = function()
	n = n + 1
	local trace = string.format("%016x%016x", tonumber(me, 16) % 2^48, n)
	return wrk.format("GET", "/r/1", { ["User-Agent"] = "",
		["traceparent"] = "00-" .. trace .. "-00f067aa0ba902b7-01" })
end
LUA
CLAIMD_ARGS=--no-nginx tied_hop id "$ngx_port" "$tmp/traceparent.lua" \
	"behind nginx (--no-nginx), requests with a trace id"
kill "$ngx_pid"; wait "$ngx_pid" || true; ngx_pid=

# 8c. The same node behind a Node.js 20 proxy on one event loop
#     (tests/peers/node_proxy.js: http.request through a keep-alive agent,
#     the client's headers passed on): plain requests followed by Node's own
#     tier (bpf/runtimes/node.c: a probe per parse, none per call); then,
#     with the tier off, requests it relays.
node_ready=$tmp/node.ready
node "$(dirname "$0")/../tests/peers/node_proxy.js" "$port" "$node_ready" --forward-headers \
	>"$tmp/node.log" 2>&1 &
nodejs_pid=$!
wait_file "$node_ready" "$nodejs_pid" "the Node.js proxy"
node_port=$(cat "$node_ready")
say "== Node.js proxy (pid $nodejs_pid) on 127.0.0.1:$node_port in front of benchsvc"
tied_hop node "$node_port" "" "behind Node.js (its tier)"
CLAIMD_ARGS=--no-node tied_hop node_relay "$node_port" "$tmp/relay.lua" \
	"behind Node.js (--no-node), relayed requests"
kill "$nodejs_pid"; wait "$nodejs_pid" || true; nodejs_pid=

# 8b. A service doing about WORK_US of CPU work per request (work_service:
#     thread per connection, keep-alive, a calibrated spin per request).
WORK_US=100
CLAIMD_SERVICE=worksvc "$build/tests/work_service" -u "$WORK_US" -r "$tmp/work.ready" \
	2>"$tmp/work.log" &
work_pid=$!
wait_file "$tmp/work.ready" "$work_pid" work_service
work_port=$(cat "$tmp/work.ready")
say "== worksvc (work_service, pid $work_pid) on 127.0.0.1:$work_port: $(cat "$tmp/work.log")"
throughput_off_on "$work_port" "${WORK_US} us of work"
work_rps_off=$off_rps work_rps_on=$on_rps work_ratio=$on_ratio work_spread="[$on_ratio_min, $on_ratio_max]"
kill "$work_pid"; wait "$work_pid" || true; work_pid=

# 9. claimd at rest once it knows many edges. Real traffic makes them:
#    edge_fan's callers (C ports, each a service "fan_caller:<port>") each
#    call every one of its backend's B ports (callees "fan_backend:<port>"),
#    ten calls per request: C x B edges. 10 callers make 1,000 edges, 90 more
#    the other 9,000. Checked against `claimctl edges --json` (the bench fails
#    when claimd knows fewer); then, the traffic over, claimd's CPU time
#    (cpu_ns) over IDLE_SECONDS of wall time. claimd serves its metrics, as it
#    does by default (on a port of its own; nobody asks).
fan_backends=100 edges_small=1000 edges_large=10000
fan_callers=$((edges_large / fan_backends))
claimd_metrics=127.0.0.1:$(free_port)
claimd_start --classes "$((edges_large > 16384 ? edges_large : 16384))" # a class per edge fits
claimd_metrics=none
env -u CLAIMD_SERVICE "$build/tests/edge_fan" backend -n "$fan_backends" -r "$tmp/fan.backends" \
	>"$tmp/fan.log" 2>&1 &
fan_pids+=("$!")
wait_file "$tmp/fan.backends" "${fan_pids[-1]}" "edge_fan backend"
env -u CLAIMD_SERVICE "$build/tests/edge_fan" callers -n "$fan_callers" -b "$tmp/fan.backends" \
	-r "$tmp/fan.callers" >>"$tmp/fan.log" 2>&1 &
fan_pids+=("$!")
wait_file "$tmp/fan.callers" "${fan_pids[-1]}" "edge_fan callers"

# The edges claimd knows: "<the fan's edges> <all, as claimctl edges --json lists them>".
edge_counts() {
	timeout 60 "$build/claimctl" --socket "$tmp/ctl.sock" edges --json 2>/dev/null |
		python3 -c '
import json, sys
callers = {"fan_caller:" + l.strip() for l in open(sys.argv[1]) if l.strip()}
backends = {"fan_backend:" + l.strip() for l in open(sys.argv[2]) if l.strip()}
try:
    d = json.load(sys.stdin)
except ValueError:
    print(-1, -1)
    sys.exit()
print(sum(1 for e in d if not e["root"] and e["caller"] in callers and e["callee"] in backends), len(d))' \
			"$tmp/fan.callers" "$tmp/fan.backends"
}
# Requests and calls the kernel saw begin, anywhere on the host: the traffic.
traffic() { status | json 'd["kernel"]["ingresses"] + d["kernel"]["egresses"]'; }

# Drives callers [first, end), waits until claimd knows target edges of the
# fan (at most EDGE_WAIT s), then until no request or call begins for a second
# (at most 30 s), then measures. Sets idle_share, idle_traffic (requests and
# calls begun during the interval, by anyone), edges_known (claimctl's count)
# and gen_s (from the traffic's start until claimd knew the edges).
idle_after() { # first end target
	local t0 j fan all r0 r1 c0 c1 w0 w1 quiet=0 deadline=$((SECONDS + EDGE_WAIT))
	t0=$(date +%s.%N)
	j=$(timeout 120 env -u CLAIMD_SERVICE "$build/tests/edge_fan" drive -c "$tmp/fan.callers" \
		-f "$1" -t "$2" -n "$fan_backends" -j 4) || say "   edge_fan drive: ${j:-gave no answer}"
	while :; do
		fan= all=
		read -r fan all < <(edge_counts) || true
		[ "${fan:--1}" -ge "$3" ] && break
		if [ "$SECONDS" -ge "$deadline" ]; then
			say "bench: FAILED: claimd knows ${fan:-?} of the $3 edges the traffic made" \
				"(${all:-?} edges in all) after ${EDGE_WAIT} s; the traffic: ${j:-none};" \
				"ring buffer drops: $(status | json 'd["kernel"]["ringbuf_drops"]')"
			exit 1
		fi
		sleep 1
	done
	gen_s=$(python3 -c "import time; print(round(time.time() - $t0, 1))")
	edges_known=$all
	r0=$(traffic)
	for _ in $(seq 30); do
		sleep 1
		r1=$(traffic)
		[ "$r1" = "$r0" ] && { quiet=1; break; }
		r0=$r1
	done
	[ "$quiet" = 1 ] || say "   warning: traffic still coming after 30 s: measuring anyway"
	r0=$(traffic)
	c0=$(cpu_ns)
	w0=$(date +%s.%N)
	sleep "$IDLE_SECONDS"
	c1=$(cpu_ns)
	w1=$(date +%s.%N)
	r1=$(traffic)
	idle_share=$(python3 -c "print(round(($c1 - $c0) / 1e9 / ($w1 - $w0), 5))")
	idle_traffic=$((r1 - r0))
	say "   $fan edges of the fan ($all in all) known ${gen_s} s after the traffic began" \
		"(${j:-}); at rest for ${IDLE_SECONDS} s: $(python3 -c "print(round(100 * $idle_share, 2))")% of" \
		"a core; $idle_traffic requests and calls began meanwhile"
}
say "== claimd at rest with many edges: edge_fan, $fan_callers callers x $fan_backends backends"
idle_after 0 "$((edges_small / fan_backends))" "$edges_small"
idle_1k=$idle_share idle_1k_traffic=$idle_traffic idle_1k_edges=$edges_known idle_1k_gen=$gen_s
idle_after "$((edges_small / fan_backends))" "$fan_callers" "$edges_large"
idle_10k=$idle_share idle_10k_traffic=$idle_traffic idle_10k_edges=$edges_known idle_10k_gen=$gen_s
claimd_stop
for p in "${fan_pids[@]}"; do kill "$p"; wait "$p" || true; done
fan_pids=()

python3 - "$build/bench.json" <<EOF
import json, os, sys
parse = json.loads('''$parse''')
def host():
    """What the figures depend on beyond the code: the CPU, the kernel, and
    the mitigations that cost every syscall (page tables switched) or every
    return in the kernel (a return thunk), the programs' own included."""
    vul = "/sys/devices/system/cpu/vulnerabilities/"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "")
    mitigations = {}
    for k in ("meltdown", "spec_rstack_overflow", "spectre_v2", "retbleed"):
        try:
            mitigations[k] = open(vul + k).read().strip()
        except OSError:
            pass
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": os.uname().release,
            "mitigations": mitigations}
out = {
    "service": "claimlab node (thread per connection), 127.0.0.1",
    "throughput_rps_without": $rps_off, "throughput_rps_with": $rps_on,
    "throughput_ratio": $ratio,
    "throughput_ratio_spread": [$ratio_min, $ratio_max],
    "floor_throughput_ratio": $floor_ratio,
    "floor_throughput_ratio_spread": [$floor_ratio_min, $floor_ratio_max],
    "throughput_over_floor": $over_floor,
    "throughput_over_floor_spread": [$over_floor_min, $over_floor_max],
    "fixed_rate_rps": $rate,
    "p50_latency_us_without": $p50o, "p50_latency_us_with": $p50n,
    "p99_latency_us_without": $p99o, "p99_latency_us_with": $p99n,
    "p99_latency_ratio": $p99_ratio,
    "p99_latency_ratio_spread": [$p99_ratio_min, $p99_ratio_max],
    "p99_latency_us_while_claimd_starts": $p99s,
    "p99_latency_us_while_claimd_starts_rounds": [$(IFS=,; echo "${p99_start[*]}")],
    "untraced_ns_per_run": $untraced,
    "untraced_pipe_syscalls": ${hn[pipe]} * 10, "program_runs_during_them": $pipe_runs,
    "untraced_syscall_ns_without_with": {"getppid": [${bare[getppid]}, ${with[getppid]}],
                                         "pipe": [${bare[pipe]}, ${with[pipe]}],
                                         "tcp": [${bare[tcp]}, ${with[tcp]}],
                                         "unix": [${bare[unix]}, ${with[unix]}]},
    "untraced_unix_ns_per_run": $untraced_unix,
    "empty_program_unix_ns_per_run": $unix_floor,
    "one_load_program_unix_ns_per_run": $unix_load_floor,
    "untraced_unix_ns_rounds": [$(IFS=,; echo "${unix_runs[*]}")],
    "empty_program_unix_ns_rounds": [$(IFS=,; echo "${unix_floor_runs[*]}")],
    "traced_redis_call_ns_per_request": $redis_ns,
    "traced_no_call_ns_per_request": $nocall_ns,
    "redis_call_ns": $redis_call_ns,
    "redis_calls_framed_per_request": $redis_calls,
    "empty_program_ns_per_run": $empty_floor,
    "one_load_program_ns_per_run": $load_floor,
    "one_load_program_ns_rounds": [$(IFS=,; echo "${load_floor_runs[*]}")],
    "untraced_ns_rounds": [$(IFS=,; echo "${untraced_runs[*]}")],
    "empty_program_ns_rounds": [$(IFS=,; echo "${floor_runs[*]}")],
    "traced_ns_per_request": $traced,
    "traced_ns_per_request_saturated": $traced_sat,
    "traced_floor_ns_per_request": $traced_floor,
    "traced_floor_ns_per_request_saturated": $traced_floor_sat,
    "traced_over_floor_paced": round($traced / $traced_floor, 3),
    "traced_over_floor_saturated": $sat_over_floor,
    "traced_over_floor_saturated_spread": [$sat_over_floor_min, $sat_over_floor_max],
    "traced_ns_per_request_saturated_rounds": [$(IFS=,; echo "${traced_sat_rounds[*]}")],
    "traced_floor_ns_per_request_saturated_rounds": [$(IFS=,; echo "${floor_sat_rounds[*]}")],
    "parse_response_head_ns": parse["response_head_ns"],
    "parse_request_head_ns": parse["request_head_ns"],
    "writev_head_ns_1_8_64_segments": [${iov_ns[0]}, ${iov_ns[1]}, ${iov_ns[2]}],
    "claim_current_ns": json.loads('''$lookup''')["ns_per_call"],
    "context_enter_leave_ns": $context_pair_ns,
    "lookup_ns": {"go": json.loads('''${lang_lookup[go]}''')["ns_per_call"],
                  "java": json.loads('''${lang_lookup[java]}''')["ns_per_call"],
                  "python": json.loads('''${lang_lookup[python]}''')["ns_per_call"],
                  "node": json.loads('''${lang_lookup[node]}''')["ns_per_call"]},
    "claimd_cpu_share": $cpu_share,
    "claimd_cpu_at_rps": $achieved5k,
    "claimd_rss_mib": $rss_mib,
    "load_rps_answered": $load_rps, "load_requests_answered": $load_ok,
    "counts_lost_under_load": $counts_lost,
    "root_calls_counted_under_load": $root_counted,
    "records_dropped_under_load": $rb_drops,
    "sidecar": "the same node behind nginx (reverse proxy, keep-alive upstream, $ngx_workers workers)",
    "sidecar_throughput_rps_without": $ngx_rps_off, "sidecar_throughput_rps_with": $ngx_rps_on,
    "sidecar_throughput_ratio": $ngx_ratio,
    "sidecar_throughput_ratio_spread": $ngx_spread,
    "sidecar_requests_keyed_calls_tied_ambiguous_none": [$ngx_keyed, $ngx_tied, $ngx_ambiguous, $ngx_none],
    "sidecar_uprobe_hits_per_request": round($ngx_uprobes / max(1, $ngx_keyed), 3),
    "relay_throughput_rps_without": $relay_rps_off, "relay_throughput_rps_with": $relay_rps_on,
    "relay_throughput_ratio": $relay_ratio,
    "relay_throughput_ratio_spread": $relay_spread,
    "relay_requests_keyed_calls_tied_ambiguous_none": [$relay_keyed, $relay_tied, $relay_ambiguous, $relay_none],
    "relay_uprobe_hits_per_request": round($relay_uprobes / max(1, $relay_keyed), 3),
    "request_id_throughput_rps_without": $id_rps_off, "request_id_throughput_rps_with": $id_rps_on,
    "request_id_throughput_ratio": $id_ratio,
    "request_id_throughput_ratio_spread": $id_spread,
    "request_id_requests_keyed_calls_tied_ambiguous_none": [$id_keyed, $id_tied, $id_ambiguous, $id_none],
    "request_id_uprobe_hits_per_request": round($id_uprobes / max(1, $id_keyed), 3),
    "node": "the same node behind a Node.js proxy (http.request, keep-alive agent, the client's headers passed on), followed by Node's tier",
    "node_throughput_rps_without": $node_rps_off, "node_throughput_rps_with": $node_rps_on,
    "node_throughput_ratio": $node_ratio,
    "node_throughput_ratio_spread": $node_spread,
    "node_requests_keyed_calls_tied_ambiguous_none": [$node_keyed, $node_tied, $node_ambiguous, $node_none],
    "node_uprobe_hits_per_request": round($node_uprobes / max(1, $node_keyed), 3),
    "node_relay_throughput_rps_without": $node_relay_rps_off, "node_relay_throughput_rps_with": $node_relay_rps_on,
    "node_relay_throughput_ratio": $node_relay_ratio,
    "node_relay_throughput_ratio_spread": $node_relay_spread,
    "node_relay_requests_keyed_calls_tied_ambiguous_none": [$node_relay_keyed, $node_relay_tied, $node_relay_ambiguous, $node_relay_none],
    "work_us_per_request": $WORK_US,
    "work_throughput_rps_without": $work_rps_off, "work_throughput_rps_with": $work_rps_on,
    "work_throughput_ratio": $work_ratio,
    "work_throughput_ratio_spread": $work_spread,
    "idle_cpu_share_1k_edges": $idle_1k, "idle_cpu_share_10k_edges": $idle_10k,
    "idle_edges_known_1k_10k": [$idle_1k_edges, $idle_10k_edges],
    "idle_requests_and_calls_during_1k_10k": [$idle_1k_traffic, $idle_10k_traffic],
    "idle_edges_made_in_s_1k_10k": [$idle_1k_gen, $idle_10k_gen],
    "idle_seconds": $IDLE_SECONDS,
    "rounds": $ROUNDS,
    "host": host(),
}
json.dump(out, open(sys.argv[1], "w"), indent=2)
def spread(k):
    """A ratio as the median of the rounds' ratios, and their min-max."""
    lo, hi = out[k + "_spread"]
    return "%.3f (%.3f-%.3f)" % (out[k], lo, hi)
rows = [
    ("throughput ratio (with/without, %d rounds)" % $ROUNDS, spread("throughput_ratio"), ">= 0.95"),
    ("  the rounds' medians, with / without", "%.0f / %.0f req/s" % ($rps_on, $rps_off), ""),
    ("  the same, the floor alone on the same traffic (the node's and wrk's)", spread("floor_throughput_ratio"), ""),
    ("  with claimd over with the floor, round by round", spread("throughput_over_floor"), ">= 0.97"),
    ("p99 latency ratio at %d req/s" % $rate, spread("p99_latency_ratio"), "<= 1.10"),
    ("  the rounds' medians, with / without", "%s / %s us" % ($p99n, $p99o), ""),
    ("  p99 while claimd starts (median; max)", "%s us; %s us" % ($p99s, max(out["p99_latency_us_while_claimd_starts_rounds"])), ""),
    ("p50 latency, without / with", "%s / %s us" % ($p50o, $p50n), ""),
    ("program time per run, untraced process (TCP)", "%s ns" % out["untraced_ns_per_run"], "<= the floor + 10 ns"),
    ("  program runs during its pipe syscalls", "%d of %d" % (out["program_runs_during_them"], out["untraced_pipe_syscalls"]), "0"),
    ("  an untraced syscall, added: getppid / pipe / TCP", " / ".join("%+.0f" % round(w - b) for b, w in (out["untraced_syscall_ns_without_with"][k] for k in ("getppid", "pipe", "tcp"))) + " ns", ""),
    ("  an empty program on its tracepoints, the same hammer (the floor)", "%s ns" % out["empty_program_ns_per_run"], ""),
    ("  the same with one load of a word of its own (a filter's least)", "%s ns" % out["one_load_program_ns_per_run"], ""),
    ("program time per run, untraced process (Unix socket)", "%s ns" % out["untraced_unix_ns_per_run"], "<= the floor + 10 ns"),
    ("  an empty program on its tracepoints, the same hammer", "%s ns" % out["empty_program_unix_ns_per_run"], ""),
    ("  the same with one load of a word of its own", "%s ns" % out["one_load_program_unix_ns_per_run"], ""),
    ("program time per traced request (all programs)", "%s ns" % out["traced_ns_per_request"], "<= 800 ns"),
    ("  the same at saturation (wrk)", "%s ns" % out["traced_ns_per_request_saturated"], ""),
    ("  the floor: task, registers, one copy, one clock", "%s ns" % out["traced_floor_ns_per_request"], ""),
    ("  the floor at saturation (wrk)", "%s ns" % out["traced_floor_ns_per_request_saturated"], ""),
    ("  traced over its floor at saturation (%d rounds)" % $ROUNDS, spread("traced_over_floor_saturated"), "<= 1.5"),
    ("  traced over its floor, paced (one round)", "%.2f" % out["traced_over_floor_paced"], ""),
    ("a traced Redis call (socket file), program time", "%s ns (%.2f framed per request)" % (out["redis_call_ns"], out["redis_calls_framed_per_request"]), ""),
    ("  its Python service's request with / without it", "%s / %s ns" % (out["traced_redis_call_ns_per_request"], out["traced_no_call_ns_per_request"]), ""),
    ("framing one head in the kernel (resp / req)", "%s / %s ns" % (out["parse_response_head_ns"], out["parse_request_head_ns"]), ""),
    ("a request whose head is one writev of 1 / 8 / 64 pieces", "%s / %s / %s ns" % tuple(out["writev_head_ns_1_8_64_segments"]), ""),
    ("claim_current()", "%.1f ns" % out["claim_current_ns"], "<= 50 ns"),
    ("  Go claim.Current(), pure Go", "%.1f ns (%.2fx C)" % (out["lookup_ns"]["go"], out["lookup_ns"]["go"] / out["claim_current_ns"]), "<= 2x C"),
    ("  Java Claim.current(), the slot read in Java", "%.1f ns (%.2fx C)" % (out["lookup_ns"]["java"], out["lookup_ns"]["java"] / out["claim_current_ns"]), "<= 2x C"),
    ("  Python Claim().current(), ctypes", "%.0f ns" % out["lookup_ns"]["python"], "<= 1000 ns"),
    ("  Node.js current(), Node-API", "%.0f ns" % out["lookup_ns"]["node"], "<= 1000 ns"),
    ("claim_context_enter() + _leave(), two probe hits", "%.0f ns" % out["context_enter_leave_ns"], ""),
    ("claimd CPU at %s req/s" % out["claimd_cpu_at_rps"], "%.2f%% of one core" % (100 * out["claimd_cpu_share"]), "<= 0.1%"),
    ("claimd peak RSS", "%s MiB" % out["claimd_rss_mib"], "<= 64 MiB"),
    ("requests counted under load: lost", "%d of %d (%.0f req/s)" % (out["counts_lost_under_load"], out["load_requests_answered"], out["load_rps_answered"]), "0"),
    ("  the client's calls counted meanwhile", "%d" % out["root_calls_counted_under_load"], ""),
    ("  records dropped meanwhile", "%d" % out["records_dropped_under_load"], ""),
    ("throughput ratio behind an nginx hop (nginx's tier)", "%s, %.0f / %.0f req/s" % (spread("sidecar_throughput_ratio"), $ngx_rps_on, $ngx_rps_off), ""),
    ("  its requests keyed / calls tied / ambiguous / none", " / ".join(str(x) for x in out["sidecar_requests_keyed_calls_tied_ambiguous_none"]), ""),
    ("  uprobe hits per request", "%s" % out["sidecar_uprobe_hits_per_request"], "1 per call"),
    ("  the same, --no-nginx, followed as a relay", "%s, %.0f / %.0f req/s" % (spread("relay_throughput_ratio"), $relay_rps_on, $relay_rps_off), ""),
    ("    its requests keyed / calls tied / ambiguous / none", " / ".join(str(x) for x in out["relay_requests_keyed_calls_tied_ambiguous_none"]), ""),
    ("    uprobe hits per request", "%s" % out["relay_uprobe_hits_per_request"], ""),
    ("  the same, --no-nginx, calls tied by a traceparent", "%s, %.0f / %.0f req/s" % (spread("request_id_throughput_ratio"), $id_rps_on, $id_rps_off), ""),
    ("    its requests keyed / calls tied / ambiguous / none", " / ".join(str(x) for x in out["request_id_requests_keyed_calls_tied_ambiguous_none"]), ""),
    ("throughput ratio behind a Node.js proxy (Node's tier)", "%s, %.0f / %.0f req/s" % (spread("node_throughput_ratio"), $node_rps_on, $node_rps_off), ""),
    ("  its requests keyed / calls tied / ambiguous / none", " / ".join(str(x) for x in out["node_requests_keyed_calls_tied_ambiguous_none"]), ""),
    ("  uprobe hits per request", "%s" % out["node_uprobe_hits_per_request"], "1 per request, 0 per call"),
    ("  the same, --no-node, followed as a relay", "%s, %.0f / %.0f req/s" % (spread("node_relay_throughput_ratio"), $node_relay_rps_on, $node_relay_rps_off), ""),
    ("    its requests keyed / calls tied / ambiguous / none", " / ".join(str(x) for x in out["node_relay_requests_keyed_calls_tied_ambiguous_none"]), ""),
    ("throughput ratio, %d us of work per request" % $WORK_US, "%s, %.0f / %.0f req/s" % (spread("work_throughput_ratio"), $work_rps_on, $work_rps_off), ""),
    ("claimd CPU at rest, %d edges made" % $edges_small, "%.2f%% of one core (%d known)" % (100 * out["idle_cpu_share_1k_edges"], $idle_1k_edges), ""),
    ("claimd CPU at rest, %d edges made" % $edges_large, "%.2f%% of one core (%d known)" % (100 * out["idle_cpu_share_10k_edges"], $idle_10k_edges), "<= 0.5%"),
]
print()
h = out["host"]
print("host: %s, %d CPUs, Linux %s; %s" % (h["cpu"], h["cpus"], h["kernel"], "; ".join(
    "%s: %s" % kv for kv in h["mitigations"].items())))
print("%-48s %-44s %s" % ("measure", "measured", "target"))
for r in rows:
    print("%-48s %-44s %s" % r)
print("\nwritten to", sys.argv[1])
EOF
