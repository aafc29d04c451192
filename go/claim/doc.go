// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package claim puts claimd's error-ownership verdicts into a Go service's
// retry logic.
//
// claimd follows each request a Go net/http server serves, on the goroutine
// that serves it, and publishes its running verdict in a read-only shared
// map: claimed (the failure starts here, a retry can help) or unclaimed (a
// dependency failed, a retry here only adds load). This package maps that
// map and reads the calling goroutine's slot with no system call and no
// cgo. With no claimd running every answer is Unknown, never an error,
// never a wait.
//
//   - Current: the running verdict of the request the calling goroutine
//     serves.
//   - Handler: middleware that writes x-error-claim on failed answers.
//   - Transport: an http.RoundTripper that retries only what a retry can
//     help (a transport failure, a claimed failure, one retry of a failure
//     that says nothing), within a Budget and the request's deadline.
//   - ShouldRetry: the decision alone, the same table as libclaim's
//     claim_should_retry (tested against it).
package claim
