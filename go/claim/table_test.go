// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import (
	"bufio"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// libclaimTable runs the program $CLAIMD_CLAIM_TABLE names (the project's
// build/tests/claim_table), which prints libclaim's own tables and
// decisions: this package must agree with every line.
func libclaimTable(t *testing.T) [][]string {
	prog := os.Getenv("CLAIMD_CLAIM_TABLE")
	if prog == "" {
		t.Skip("CLAIMD_CLAIM_TABLE is not set: make test sets it to build/tests/claim_table")
	}
	out, err := exec.Command(prog).Output()
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	var lines [][]string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		lines = append(lines, strings.Fields(sc.Text()))
	}
	return lines
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

func TestAgreesWithLibclaim(t *testing.T) {
	counts := map[string]int{}
	for _, f := range libclaimTable(t) {
		counts[f[0]]++
		switch f[0] {
		case "verdict":
			if got := Verdict(atoi(t, f[1])).String(); got != f[2] {
				t.Errorf("verdict %s: %q, libclaim says %q", f[1], got, f[2])
			}
		case "rule":
			if got := Rule(atoi(t, f[1])).String(); got != f[2] {
				t.Errorf("rule %s: %q, libclaim says %q", f[1], got, f[2])
			}
		case "parse":
			value := []byte{}
			if f[1] != "-" {
				var err error
				if value, err = hex.DecodeString(f[1]); err != nil {
					t.Fatal(err)
				}
			}
			if got := ParseHeader(string(value)); int(got) != atoi(t, f[2]) {
				t.Errorf("ParseHeader(%q) = %d, libclaim says %s", value, got, f[2])
			}
		case "goroutine":
			tgid, _ := strconv.ParseUint(f[1], 10, 32)
			g, _ := strconv.ParseUint(f[2], 10, 64)
			got := goroutineIndex(uint32(tgid), uintptr(g))
			if int(got) != atoi(t, f[3]) {
				t.Errorf("goroutineIndex(%s, %s) = %d, the kernel's is %s", f[1], f[2], got, f[3])
			}
			// In the goroutines' region, where no thread's slot is.
			if got < threadSlots || got >= mapSlots {
				t.Errorf("goroutineIndex(%s, %s) = %d: not in [%d, %d)", f[1], f[2], got,
					threadSlots, mapSlots)
			}
		case "procunsure":
			word, _ := strconv.ParseUint(f[1], 10, 64)
			pid, _ := strconv.ParseUint(f[2], 10, 32)
			seen, _ := strconv.ParseUint(f[3], 10, 32)
			got := claimProcUnsure(word, uint32(pid), uint32(seen))
			if got != (f[4] == "1") {
				t.Errorf("claimProcUnsure(%s, %s, %s) = %v, libclaim's %s", f[1], f[2], f[3], got,
					f[4])
			}
		case "decision":
			checkDecision(t, f)
		}
	}
	if counts["decision"] < 1000 || counts["rule"] != len(ruleNames) || counts["verdict"] != 4 ||
		counts["parse"] == 0 || counts["goroutine"] == 0 || counts["procunsure"] == 0 {
		t.Fatalf("libclaim's table is not whole: %v", counts)
	}
	t.Logf("agrees with libclaim on %v", counts)
}

// checkDecision: "decision status header attempt max fail budget deadline name".
func checkDecision(t *testing.T, f []string) {
	o := RetryOpts{Attempt: atoi(t, f[3]), MaxAttempts: atoi(t, f[4]), FailStatus: atoi(t, f[5])}
	switch f[6] {
	case "empty":
		o.Budget = NewBudget(0.1, 1)
	case "full":
		o.Budget = NewBudget(1, 1)
		o.Budget.Request()
	}
	switch f[7] {
	case "passed":
		o.Deadline = time.Now().Add(-time.Hour)
	case "far":
		o.Deadline = time.Now().Add(time.Hour)
	}
	out := Outcome{Status: atoi(t, f[1]), Header: Verdict(atoi(t, f[2]))}
	if got := ShouldRetry(out, o).String(); got != f[8] {
		t.Errorf("%s: %s, libclaim says %s", strings.Join(f[1:8], " "), got, f[8])
	}
}
