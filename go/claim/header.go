// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import "strings"

// HeaderName is the header a failed answer carries its verdict in.
const HeaderName = "x-error-claim"

// HeaderValue is the value a failed answer with verdict v carries: "claimed"
// or "unclaimed", and "" for any other verdict (write no header: the caller
// then retries at most once).
func HeaderValue(v Verdict) string {
	if v != Claimed && v != Unclaimed {
		return ""
	}
	return v.String()
}

// ParseHeader is the verdict an x-error-claim value carries (case-insensitive,
// surrounding blanks ignored); None when it is neither.
func ParseHeader(value string) Verdict {
	value = strings.TrimSpace(value)
	switch {
	case strings.EqualFold(value, Claimed.String()):
		return Claimed
	case strings.EqualFold(value, Unclaimed.String()):
		return Unclaimed
	}
	return None
}
