// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import (
	"io"
	"net/http"
	"time"
)

// Transport is an http.RoundTripper that retries a failed attempt only when
// ShouldRetry says so: a transport failure or a claimed failure within
// MaxAttempts, a failure without x-error-claim once, an unclaimed failure
// never; within Budget and the request context's deadline. A request with a
// body is retried only if it can be replayed (Request.GetBody).
type Transport struct {
	Base        http.RoundTripper // nil: http.DefaultTransport
	MaxAttempts int               // 0: 2 (one retry)
	FailStatus  int               // statuses from this up fail; 0: 500
	Budget      *Budget           // nil: no budget
	AttemptTime time.Duration     // what an attempt needs, weighed against the deadline
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip sends req, and again as long as ShouldRetry says Retry.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.Budget.Request()
	opts := RetryOpts{MaxAttempts: t.MaxAttempts, FailStatus: t.FailStatus, Budget: t.Budget,
		AttemptTime: t.AttemptTime}
	if d, ok := req.Context().Deadline(); ok {
		opts.Deadline = d
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		opts.MaxAttempts = 1 // a body that cannot be sent again: one attempt
	}
	for attempt := 1; ; attempt++ {
		try := req
		if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			try = req.Clone(req.Context())
			try.Body = body
		}
		resp, err := t.base().RoundTrip(try)
		out := Outcome{}
		if err == nil {
			out.Status = resp.StatusCode
			out.Header = ParseHeader(resp.Header.Get(HeaderName))
		}
		opts.Attempt = attempt
		if ShouldRetry(out, opts) != Retry {
			return resp, err
		}
		if resp != nil {
			io.Copy(io.Discard, resp.Body) // keep the connection for the retry
			resp.Body.Close()
		}
	}
}
