// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import "net/netip"

// Verdict is who owns a failure, as claimd judges it.
type Verdict uint8

// The verdicts, numbered as in libclaim's claim_types.h.
const (
	None      Verdict = 0 // not failed, or nothing known (a header that says neither)
	Claimed   Verdict = 1 // the failure starts here: a retry can help
	Unclaimed Verdict = 2 // passed up from a failed dependency: a retry only adds load
	Unknown   Verdict = 3 // claimd could not decide
)

var verdictNames = [...]string{"none", "claimed", "unclaimed", "unknown"}

// String is "claimed", "unclaimed" or "unknown", as claim_verdict_name.
func (v Verdict) String() string {
	if v != Claimed && v != Unclaimed {
		v = Unknown
	}
	return verdictNames[v]
}

// Rule says why a verdict is what it is, numbered as in claim_types.h.
type Rule uint8

var ruleNames = [...]string{
	"none",
	"no-failed-call",
	"callee-unclaimed",
	"fail-close-edge",
	"fail-open-edges-only",
	"unknown-edge",
	"no-egress-log",
	"multiplexed",
	"framing-lost",
	"untied-call",
	"unfinished-call",
	"opaque-call",
	"unread-program",
}

// String is the rule's name ("fail-close-edge", "multiplexed", ...), as
// claim_rule_name; "none" out of range.
func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "none"
}

// Result is what claimd says of the request the calling goroutine serves.
type Result struct {
	Verdict Verdict // Claimed, Unclaimed or Unknown
	Rule    Rule
	// Cause is the callee whose failure decided; its zero value when none did.
	Cause netip.AddrPort
}
