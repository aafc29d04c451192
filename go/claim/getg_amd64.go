// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

// sysBPF is bpf(2)'s number on amd64.
const sysBPF = 321

// getg is the address of the calling goroutine's runtime.g, which claimd's
// probes read from R14: the key of the goroutine's slot (getg_amd64.s).
func getg() uintptr
