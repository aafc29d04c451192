// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import (
	"sync"
	"time"
)

// Budget is a retry budget: a token bucket that earns Ratio tokens per
// request and holds at most Burst. Safe for concurrent use.
type Budget struct {
	mu     sync.Mutex
	ratio  float64
	burst  float64
	tokens float64
}

// NewBudget makes a budget allowing retries up to ratio of requests (0.1:
// 10%), with at most burst tokens saved (at least 1); it starts empty.
func NewBudget(ratio, burst float64) *Budget {
	if ratio < 0 {
		ratio = 0
	}
	if burst < 1 {
		burst = 1
	}
	return &Budget{ratio: ratio, burst: burst}
}

// Request counts one request sent (first attempts only): it earns tokens.
func (b *Budget) Request() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.tokens += b.ratio
	if b.tokens > b.burst {
		b.tokens = b.burst
	}
	b.mu.Unlock()
}

// Take spends a token for a retry: true if there was one. A nil budget
// always has one.
func (b *Budget) Take() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// A whole token; the epsilon forgives sums of tenths in floating point.
	if b.tokens < 1-1e-9 {
		return false
	}
	b.tokens--
	return true
}

// Tokens is what the budget holds now.
func (b *Budget) Tokens() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}

// Outcome is what came back from one attempt of a call.
type Outcome struct {
	Status int     // the HTTP status; 0 for a transport failure
	Header Verdict // its x-error-claim (ParseHeader); None when absent
}

// RetryOpts are the limits a retry decision weighs.
type RetryOpts struct {
	Attempt     int     // the attempt that just failed: 1 for the first
	MaxAttempts int     // 0: 2 (one retry)
	FailStatus  int     // statuses from this up fail; 0: 500
	Budget      *Budget // nil: none
	Deadline    time.Time
	AttemptTime time.Duration // what another attempt needs, against Deadline
}

// Decision is what to do after an attempt.
type Decision int

// The decisions, numbered and named as libclaim's enum claim_decision.
const (
	Retry         Decision = iota
	DoneOK                 // not a failure: nothing to retry
	DoneUnclaimed          // the callee passed the failure up: retrying it adds load
	DoneOnce               // no claim header: at most one retry, already made
	DoneAttempts           // MaxAttempts reached
	DoneBudget             // the budget said no
	DoneDeadline           // not enough time left for another attempt
)

var decisionNames = [...]string{"retry", "ok", "unclaimed", "no-header-retried-once", "attempts",
	"budget", "deadline"}

func (d Decision) String() string {
	if d >= 0 && int(d) < len(decisionNames) {
		return decisionNames[d]
	}
	return "?"
}

// ShouldRetry decides after a failed attempt, as claim_should_retry does:
//
//	transport failure                 -> retry, within budget
//	failure, x-error-claim: claimed   -> retry, within budget
//	failure, x-error-claim: unclaimed -> no
//	failure, no claim header          -> at most once, within budget
//
// plus MaxAttempts and the deadline. A budget token is spent only when the
// answer is Retry.
func ShouldRetry(out Outcome, o RetryOpts) Decision {
	failStatus, maxAttempts, attempt := o.FailStatus, o.MaxAttempts, o.Attempt
	if failStatus == 0 {
		failStatus = 500
	}
	if maxAttempts == 0 {
		maxAttempts = 2
	}
	if attempt < 1 {
		attempt = 1
	}
	if out.Status != 0 && out.Status < failStatus {
		return DoneOK
	}
	if out.Status != 0 {
		if out.Header == Unclaimed {
			return DoneUnclaimed
		}
		if out.Header != Claimed && attempt >= 2 {
			return DoneOnce
		}
	}
	if attempt >= maxAttempts {
		return DoneAttempts
	}
	if !o.Deadline.IsZero() && !time.Now().Add(o.AttemptTime).Before(o.Deadline) {
		return DoneDeadline
	}
	if o.Budget != nil && !o.Budget.Take() {
		return DoneBudget
	}
	return Retry
}
