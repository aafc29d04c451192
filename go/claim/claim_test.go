// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package claim

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

func TestLayout(t *testing.T) {
	if s := unsafe.Sizeof(slot{}); s != slotSize {
		t.Fatalf("a slot is %d bytes, the kernel's 64", s)
	}
	if o := unsafe.Offsetof(slot{}.goroutine); o != 32 {
		t.Fatalf("goroutine at %d, the kernel's at 32", o)
	}
	if o := unsafe.Offsetof(slot{}.outsideSeen); o != 44 {
		t.Fatalf("outside_seen at %d, the kernel's at 44", o)
	}
	if o := unsafe.Offsetof(slot{}.procWord); o != 56 {
		t.Fatalf("proc_word at %d, the kernel's at 56", o)
	}
}

func TestNoClaimd(t *testing.T) {
	h := Open(t.TempDir() + "/no-such-map")
	if h.Connected() {
		t.Fatal("connected to nothing")
	}
	if r := h.Current(); r.Verdict != Unknown || r.Cause.IsValid() {
		t.Fatalf("no claimd: %+v, want unknown", r)
	}
	h.Close()
	var nilHandle *Handle
	if nilHandle.Current().Verdict != Unknown {
		t.Fatal("a nil handle must answer unknown")
	}
}

// fakeMap is a verdict map in ordinary memory, laid out as the kernel's.
func fakeMap(t *testing.T) *Handle {
	mem := make([]byte, mapSlots*slotSize)
	hdr := (*mapHeader)(unsafe.Pointer(&mem[0]))
	*hdr = mapHeader{magic: mapMagic, version: mapVersion, slots: mapSlots, slotSize: slotSize,
		alive: 1}
	return &Handle{mem: mem, pid: uint32(os.Getpid())}
}

func (h *Handle) slotAt(tgid uint32, g uintptr) *slot {
	return (*slot)(unsafe.Pointer(&h.mem[uintptr(goroutineIndex(tgid, g))*slotSize]))
}

func TestCurrentReadsItsGoroutinesSlot(t *testing.T) {
	h := fakeMap(t)
	g := getg()
	s := h.slotAt(h.pid, g)
	*s = slot{goroutine: uint64(g), tgid: h.pid, active: 1, verdict: uint8(Unclaimed),
		rule: 3, causePort: 6379}
	s.causeAddr = [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}
	r := h.Current()
	if r.Verdict != Unclaimed || r.Rule.String() != "fail-close-edge" ||
		r.Cause.String() != "127.0.0.1:6379" {
		t.Fatalf("got %+v (%v)", r, r.Cause)
	}
	// Another goroutine, whatever its slot holds, is not this one.
	done := make(chan Result)
	go func() { done <- h.Current() }()
	if other := <-done; other.Verdict != Unknown {
		t.Fatalf("another goroutine read %v", other.Verdict)
	}
	// Its slot taken by another process's goroutine, or a thread's, or idle.
	for _, c := range []slot{
		{goroutine: uint64(g), tgid: h.pid + 1, active: 1, verdict: uint8(Claimed)},
		{tid: 77, goroutine: 0, tgid: 0, active: 1, verdict: uint8(Claimed)},
		{goroutine: uint64(g), tgid: h.pid, active: 0, verdict: uint8(Claimed)},
	} {
		*s = c
		if r := h.Current(); r.Verdict != Unknown {
			t.Fatalf("slot %+v read as %v", c, r.Verdict)
		}
	}
	// A call outside requests of its process since its request began: unsure.
	*s = slot{goroutine: uint64(g), tgid: h.pid, active: 1, verdict: uint8(Claimed),
		outsideSeen: 3}
	main := (*slot)(unsafe.Pointer(&h.mem[uintptr(1+h.pid%(threadSlots-1))*slotSize]))
	atomic.StoreUint64(&main.procWord, uint64(h.pid)<<32|3)
	if r := h.Current(); r.Verdict != Claimed {
		t.Fatalf("no call outside since: %v", r.Verdict)
	}
	atomic.StoreUint64(&main.procWord, uint64(h.pid)<<32|4)
	if r := h.Current(); r.Verdict != Unknown || r.Rule.String() != "untied-call" {
		t.Fatalf("a call outside since: %v %v", r.Verdict, r.Rule)
	}
	atomic.StoreUint64(&main.procWord, 0)
	// Being written (odd sequence) the whole time: no answer.
	*s = slot{seq: 1, goroutine: uint64(g), tgid: h.pid, active: 1, verdict: uint8(Claimed)}
	if r := h.Current(); r.Verdict != Unknown {
		t.Fatalf("a slot being written read as %v", r.Verdict)
	}
	// claimd gone (alive 0): unknown.
	*s = slot{goroutine: uint64(g), tgid: h.pid, active: 1, verdict: uint8(Claimed)}
	atomic.StoreUint32(&(*mapHeader)(unsafe.Pointer(&h.mem[0])).alive, 0)
	if r := h.Current(); r.Verdict != Unknown {
		t.Fatalf("claimd gone: %v", r.Verdict)
	}
}

func TestHandlerWritesTheHeader(t *testing.T) {
	h := fakeMap(t)
	srv := httptest.NewServer(HandlerWith(h, 500, http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) {
			g := getg()
			v := map[string]Verdict{"/own": Claimed, "/passed": Unclaimed, "/unsure": Unknown,
				"/ok": Claimed}[r.URL.Path]
			*h.slotAt(h.pid, g) = slot{goroutine: uint64(g), tgid: h.pid, active: 1,
				verdict: uint8(v)}
			if r.URL.Path == "/ok" {
				w.Write([]byte("fine"))
				return
			}
			w.WriteHeader(http.StatusBadGateway)
		})))
	defer srv.Close()
	for path, want := range map[string]string{"/own": "claimed", "/passed": "unclaimed",
		"/unsure": "", "/ok": ""} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get(HeaderName); got != want {
			t.Errorf("%s: x-error-claim %q, want %q", path, got, want)
		}
	}
}

// A server answering each path as it says, counting attempts.
func flaky(t *testing.T, attempts *int32) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt32(attempts, 1)
		switch r.URL.Path {
		case "/claimed":
			w.Header().Set(HeaderName, "claimed")
			w.WriteHeader(503)
		case "/unclaimed":
			w.Header().Set(HeaderName, "unclaimed")
			w.WriteHeader(502)
		case "/silent":
			w.WriteHeader(500)
		case "/reset":
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
		default:
			w.WriteHeader(404)
		}
	}))
}

func TestTransportRetriesOnlyWhatItShould(t *testing.T) {
	var attempts int32
	srv := flaky(t, &attempts)
	defer srv.Close()
	cases := []struct {
		path string
		max  int
		want int32
	}{
		{"/claimed", 4, 4},   // claimed: retried up to the attempts
		{"/unclaimed", 4, 1}, // passed up: never
		{"/silent", 4, 2},    // no header: once
		{"/reset", 3, 3},     // a transport failure: like claimed
		{"/missing", 4, 1},   // 404 is no failure
	}
	for _, c := range cases {
		atomic.StoreInt32(&attempts, 0)
		tr := &Transport{Base: &http.Transport{DisableKeepAlives: true}, MaxAttempts: c.max}
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL + c.path)
		if err == nil {
			resp.Body.Close()
		}
		if got := atomic.LoadInt32(&attempts); got != c.want {
			t.Errorf("%s: %d attempts, want %d", c.path, got, c.want)
		}
	}
}

func TestTransportBudgetAndDeadline(t *testing.T) {
	var attempts int32
	srv := flaky(t, &attempts)
	defer srv.Close()
	// 10% of requests: 10 first attempts earn one retry.
	tr := &Transport{MaxAttempts: 4, Budget: NewBudget(0.1, 1)}
	client := &http.Client{Transport: tr}
	for i := 0; i < 10; i++ {
		resp, err := client.Get(srv.URL + "/claimed")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := atomic.LoadInt32(&attempts); got != 11 {
		t.Fatalf("10 requests with a 10%% budget: %d attempts, want 11", got)
	}
	// A deadline nearer than an attempt needs: no retry.
	atomic.StoreInt32(&attempts, 0)
	tr = &Transport{MaxAttempts: 4, AttemptTime: time.Hour}
	req, _ := http.NewRequest("GET", srv.URL+"/claimed", nil)
	req, cancel := contextWithTimeout(req, time.Minute)
	defer cancel()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := atomic.LoadInt32(&attempts); got != 1 {
		t.Fatalf("no time for a retry: %d attempts", got)
	}
}
