#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages one use of claimd needs, only those that are
# missing. Idempotent, and quick when everything is already there (one
# dpkg-query); at most one 'apt-get update', and only when the install needs it.
#
#   scripts/install-deps.sh GROUP...     (default: build)
#
#   build   compile claimd, claimctl, libclaim, claimlab, the tests (make)
#   fuzz    the libFuzzer targets (make fuzz; make test runs them briefly)
#   test    the real peers the end-to-end tests start (make test), go included
#   go      the Go peers (make go-peers)
#   langs   libclaim's packages for Python, Java, Node.js and Go, and the
#           services that use them (make test; make demo's polyglot storm)
#   demo    make demo
#   bench   make bench
#   record  record the wire framers' test conversations again (by hand)
#
# The Makefile calls it with the group of each target, once per build
# directory (a stamp file); run it by hand to install ahead of time.
set -euo pipefail

# Build: compilers, BPF toolchain, the libraries claimd and the tests link against.
build_pkgs=(
	make clang llvm gcc pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libjson-c-dev libmicrohttpd-dev libcurl4-openssl-dev help2man
	libssl-dev # tests/peers/pool_proxy: TLS through memory BIOs
	libcapstone-dev # user/claimd/probes/go/goexec: the RET instructions of Go functions
	liburing-dev # tests/peers/uring_front: a front whose calls go through io_uring
)
# Fuzzers: clang's libFuzzer and the sanitizers' runtimes (tests/fuzz).
fuzz_pkgs=(libclang-rt-14-dev)
# Tests: the real peers and tools the end-to-end tests start.
test_pkgs=(
	python3 python3-requests # tests/peers/*.py, session_service.py's pool
	openssl curl nginx iproute2 procps util-linux
	apache2 # mod_ssl and mod_proxy in front of a backend (test_apache)
	prometheus # promtool, and a server the tests start
	chromium chromium-driver # the map in a headless browser
	tmux # claimctl top in a real terminal
	# dependencies that speak no HTTP, over TCP and socket files (test_deps)
	redis-server python3-redis
	postgresql-15 python3-psycopg2
	mariadb-server mariadb-client python3-pymysql
	haproxy python3-aiohttp # event loops held to no wrong verdict (test_event_loops)
)
# libclaim's packages in other languages, their tests and the services that
# use them (go_pkgs too: go/claim and its peers).
langs_pkgs=(
	python3 python3-requests python3-flask # python/libclaim: WSGI middleware, urllib3 retries
	python3-uvicorn python3-starlette # python/libclaim: ASGI middleware under uvicorn
	python3-pytest # python/tests, run by pytest
	openjdk-17-jdk-headless # tests/peers/java: HttpServer and HttpClient (test_java)
	libjna-java junit4 # java/: libclaim for Java through JNA, its JUnit tests
	nodejs # node/: libclaim for Node.js (its addon against Node's headers), Node peers
)
# npm packs node/ (make test): Debian's Node.js has it apart; a vendor's
# Node.js (NodeSource) carries its own and conflicts with Debian's.
if ! command -v npm >/dev/null 2>&1; then
	langs_pkgs+=(npm)
fi
# Recording: the servers and clients the wire framers' conversations were
# recorded from (tests/unit/vectors/README), to record them again. The
# tests replay the recordings and need none of these.
record_pkgs=(
	redis-server postgresql-15 postgresql-client-15 mariadb-server mariadb-client
	python3-psycopg2 python3-pymysql libmariadb-dev
)
# Go: the Go peers of the tests and the benchmark (tests/peers/go), Go 1.19
# and grpc-go built in GOPATH mode.
go_pkgs=(golang-go golang-google-grpc-dev)
# The demo: claimlab and claimd, python3 to put the tables together (and the
# langs group: the polyglot storm).
demo_pkgs=(python3)
# The benchmark: wrk for throughput, python3 for the figures, sysctl; nginx
# as the reverse-proxy hop in front of the service (its own config);
# redis-server and redis-py for a traced request that calls Redis.
bench_pkgs=(python3 wrk procps nginx redis-server python3-redis)

usage() {
	echo "usage: $0 [build|fuzz|test|go|langs|demo|bench|record]..." >&2
	exit 2
}

[ $# -gt 0 ] || set -- build
wanted=()
for g in "$@"; do
	case $g in
	build) wanted+=("${build_pkgs[@]}") ;;
	fuzz) wanted+=("${fuzz_pkgs[@]}") ;;
	test) wanted+=("${test_pkgs[@]}" "${langs_pkgs[@]}" "${go_pkgs[@]}") ;;
	go) wanted+=("${go_pkgs[@]}") ;;
	langs) wanted+=("${langs_pkgs[@]}" "${go_pkgs[@]}") ;;
	demo) wanted+=("${demo_pkgs[@]}" "${langs_pkgs[@]}" "${go_pkgs[@]}") ;;
	bench) wanted+=("${bench_pkgs[@]}" "${go_pkgs[@]}") ;;
	record) wanted+=("${record_pkgs[@]}") ;;
	-h | --help) usage ;;
	*)
		echo "install-deps: no group '$g'" >&2
		usage
		;;
	esac
done
groups="$*"

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "install-deps: not a Debian system; '$groups' needs the equivalents of:" \
		"${wanted[*]}" >&2
	exit 0
fi

# One dpkg-query for all of them; a package it does not know is missing too.
mapfile -t wanted < <(printf '%s\n' "${wanted[@]}" | sort -u)
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null |
	awk '$NF == "installed" { sub(/:.*/, "", $1); print $1 }' || true)
missing=()
for p in "${wanted[@]}"; do
	grep -qxF -- "$p" <<<"$installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: '$groups' needs Debian packages that are missing: ${missing[*]}" >&2
	echo "install-deps: run as root (sudo $0 $groups)," \
		"or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "install-deps ($groups): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another install may hold dpkg's lock (make -j, another checkout): wait for it.
apt=(apt-get -q -y -o DPkg::Lock::Timeout=600 --no-install-recommends)
if ! "${apt[@]}" install "${missing[@]}" >/dev/null 2>&1; then
	# The package lists are stale or absent (a fresh machine): update them once.
	apt-get -q -o DPkg::Lock::Timeout=600 update >/dev/null
	"${apt[@]}" install "${missing[@]}" >/dev/null
fi
# nginx's, Apache's and prometheus's packages start system instances; tests run their own.
for svc in nginx apache2 prometheus; do
	if [[ " ${missing[*]} " == *" $svc "* ]] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now "$svc" >/dev/null 2>&1 || true
	fi
done
