#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make test: the unit tests (no privileges needed), then the BPF and
# end-to-end tests (root; they skip when not root, and fail instead under
# CLAIMD_REQUIRE_BPF=1). The runner's last line is the summary.
set -uo pipefail
build=${1:-build}
shift || true
exec "$build/test_progs" "$@"
