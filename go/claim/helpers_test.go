// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import (
	"context"
	"net/http"
	"time"
)

// contextWithTimeout is req with a deadline d from now.
func contextWithTimeout(req *http.Request, d time.Duration) (*http.Request, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(req.Context(), d)
	return req.WithContext(ctx), cancel
}
