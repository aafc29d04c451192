#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# node/ as npm ships it: npm pack makes the package; npm install, offline,
# builds its addon with node-gyp (binding.gyp) against Node's own headers
# and libclaim's header ($CLAIM_INCLUDE, the project's user/libclaim here,
# /usr/include/claimd once installed); the installed package then loads,
# and with no claimd answers unknown.
#
#   node_pack.sh TOP_DIR      (libclaim.so from $CLAIMD_LIBCLAIM)
set -eu
top=$1
tmp=$(mktemp -d /tmp/claimd-npm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pkg" "$tmp/app"
cd "$top/node"
tgz=$(npm pack --silent --pack-destination "$tmp/pkg")
echo "packed: $tgz"
tar -tzf "$tmp/pkg/$tgz" | sort
for f in package/package.json package/index.js package/binding.gyp package/src/claim_napi.c; do
	tar -tzf "$tmp/pkg/$tgz" | grep -qx "$f" || {
		echo "the package lacks $f" >&2
		exit 1
	}
done
cd "$tmp/app"
echo '{"name": "app", "version": "1.0.0", "private": true}' >package.json
CPATH=${CLAIM_INCLUDE:-$top/user/libclaim} npm install --offline --no-audit --no-fund \
	--nodedir=/usr "$tmp/pkg/$tgz"
test -f node_modules/libclaim/build/Release/claim.node || {
	echo "npm install built no addon" >&2
	exit 1
}
unset CLAIMD_NODE_ADDON
CLAIMD_VERDICTS=/nonexistent/verdicts node -e '
const claim = require("libclaim");
const assert = require("assert");
assert.ok(require.resolve("libclaim").startsWith(process.cwd()), "the installed copy");
assert.strictEqual(claim.connected(), false);
assert.strictEqual(claim.current().verdict, "unknown");
assert.strictEqual(claim.parseHeader(" Unclaimed "), "unclaimed");
console.log("installed libclaim loads; with no claimd: unknown");
'
