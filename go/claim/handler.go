// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import "net/http"

// Handler wraps next so that every failed answer it writes (a status of 500
// or more) carries x-error-claim with the running verdict of its request, as
// claimd judges it when the status is written. Unknown writes no header.
// The status must be written on the goroutine serving the request (the one
// net/http runs the handler on), where claimd keeps its verdict.
func Handler(next http.Handler) http.Handler {
	return HandlerWith(Default(), 500, next)
}

// HandlerWith is Handler asking h, with statuses from failStatus up failed.
func HandlerWith(h *Handle, failStatus int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&claimWriter{ResponseWriter: w, h: h, failStatus: failStatus}, r)
	})
}

// claimWriter adds the header as the status goes out.
type claimWriter struct {
	http.ResponseWriter
	h          *Handle
	failStatus int
	wrote      bool
}

func (cw *claimWriter) WriteHeader(status int) {
	if !cw.wrote && status >= cw.failStatus {
		if v := HeaderValue(cw.h.Current().Verdict); v != "" {
			cw.Header().Set(HeaderName, v)
		}
	}
	if status >= 200 {
		cw.wrote = true
	}
	cw.ResponseWriter.WriteHeader(status)
}

func (cw *claimWriter) Write(b []byte) (int, error) {
	cw.wrote = true // an implicit 200
	return cw.ResponseWriter.Write(b)
}

// Flush passes a flush on when the writer below can.
func (cw *claimWriter) Flush() {
	if f, ok := cw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer below.
func (cw *claimWriter) Unwrap() http.ResponseWriter {
	return cw.ResponseWriter
}
