#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages claimd's build and tests need, only those that
# are missing. Idempotent and quick when everything is already there; the
# Makefile calls it before building.
set -euo pipefail

# Build: compilers, BPF toolchain, libraries claimd links against.
build_pkgs=(
	make clang llvm gcc pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libjson-c-dev libmicrohttpd-dev help2man
	libssl-dev # tests/peers/pool_proxy: TLS through memory BIOs
	libclang-rt-14-dev # libFuzzer and the sanitizers' runtimes (make fuzz, tests/fuzz)
)
# Tests and demo: the real peers the end-to-end tests start.
test_pkgs=(
	python3 curl wrk nginx iproute2 procps util-linux
	prometheus chromium chromium-driver tmux
	openssl python3-requests # certificates for TLS tests; tests/peers/session_service.py
)

missing=()
for p in "${build_pkgs[@]}" "${test_pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages: ${missing[*]}" >&2
	echo "install-deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; then
	apt-get update >/dev/null
	apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi
# nginx's and prometheus's packages start system instances; tests run their own.
for svc in nginx prometheus; do
	if [[ " ${missing[*]} " == *" $svc "* ]] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now "$svc" >/dev/null 2>&1 || true
	fi
done
