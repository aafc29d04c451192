// SPDX-License-Identifier: GPL-2.0
//
// A Go service and a Go client using only go/claim, as a service owner
// would (a module requiring claimd.dev/claim, replaced by the project's
// copy).
//
// claimsvc serve -backend PORT -ready FILE: GET /r/<id> fails ids % 5 == 1
// on its own (500, before calling); otherwise calls the backend's /r/<id>
// and passes its failure up (502). claim.Handler writes x-error-claim.
// With -retry (a hop of a storm) it fails nothing on its own and calls with
// up to one retry: "claim" through claim.Transport (an unclaimed failure is
// not retried), "naive" regardless of what the failure says; GET /stats
// answers how many /r/ requests it served.
//
// claimsvc client -port PORT [-requests N] [-workers W]: GET /r/0 .. /r/N-1,
// W at once, through a claim.Transport (up to 4 attempts) and prints, per
// id, its final status, x-error-claim and attempts, as one JSON object.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"claimd.dev/claim"
)

func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	backend := fs.String("backend", "", "the backend's port")
	ready := fs.String("ready", "", "file to write the port to")
	policy := fs.String("retry", "", "a storm's hop: claim or naive")
	fs.Parse(args)
	client := &http.Client{Timeout: 30 * time.Second}
	switch *policy {
	case "claim":
		client.Transport = &claim.Transport{MaxAttempts: 2}
	case "naive":
		client.Transport = naive{http.DefaultTransport}
	}
	var served int64
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "{\"requests\": %d}\n", atomic.LoadInt64(&served))
	})
	mux.HandleFunc("/r/", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		atomic.AddInt64(&served, 1)
		if *policy == "" && id%5 == 1 {
			http.Error(w, "own failure", http.StatusInternalServerError)
			return
		}
		resp, err := client.Get("http://127.0.0.1:" + *backend + r.URL.Path)
		if err != nil {
			http.Error(w, "backend unreachable", http.StatusBadGateway)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			http.Error(w, "backend failed", http.StatusBadGateway)
			return
		}
		fmt.Fprintf(w, "ok %d\n", id)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(*ready, []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.Serve(ln, claim.Handler(mux))
}

// naive retries a failed call once, whatever the failure says: the policy
// a storm grows from.
type naive struct{ base http.RoundTripper }

func (n naive) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := n.base.RoundTrip(r)
	if err == nil && resp.StatusCode < 500 {
		return resp, nil
	}
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return n.base.RoundTrip(r)
}

type attemptsKey struct{}

// counting counts the attempts a claim.Transport makes, in the counter its
// request's context carries.
type counting struct{ base http.RoundTripper }

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	if n, ok := r.Context().Value(attemptsKey{}).(*int32); ok {
		atomic.AddInt32(n, 1)
	}
	return c.base.RoundTrip(r)
}

type answer struct {
	Status   int    `json:"status"`
	Claim    string `json:"claim"`
	Attempts int32  `json:"attempts"`
}

func client(args []string) {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	port := fs.String("port", "", "the service's port")
	requests := fs.Int("requests", 100, "ids asked")
	workers := fs.Int("workers", 8, "requests in flight")
	fs.Parse(args)
	c := &http.Client{Transport: &claim.Transport{Base: counting{http.DefaultTransport},
		MaxAttempts: 4}, Timeout: 60 * time.Second}
	answers := make([]answer, *requests)
	ids := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				answers[i] = ask(c, *port, i)
			}
		}()
	}
	for i := 0; i < *requests; i++ {
		ids <- i
	}
	close(ids)
	wg.Wait()
	out := map[string]answer{}
	for i, a := range answers {
		out[strconv.Itoa(i)] = a
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

// ask sends GET /r/<id> and says how it ended.
func ask(c *http.Client, port string, id int) answer {
	var n int32
	a := answer{}
	ctx := context.WithValue(context.Background(), attemptsKey{}, &n)
	req, _ := http.NewRequestWithContext(ctx, "GET",
		fmt.Sprintf("http://127.0.0.1:%s/r/%d", port, id), nil)
	resp, err := c.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		a.Status = resp.StatusCode
		a.Claim = resp.Header.Get(claim.HeaderName)
	}
	a.Attempts = atomic.LoadInt32(&n)
	return a
}

func bench(args []string) {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	n := fs.Int("n", 20000000, "calls")
	fs.Parse(args)
	h := claim.Default()
	unknown := 0
	h.Current() // the map opened, the pid read
	t0 := time.Now()
	for i := 0; i < *n; i++ {
		if h.Current().Verdict == claim.Unknown {
			unknown++
		}
	}
	ns := float64(time.Since(t0).Nanoseconds()) / float64(*n)
	connected := 0
	if h.Connected() {
		connected = 1
	}
	fmt.Printf("{\"calls\":%d,\"ns_per_call\":%.2f,\"connected\":%d,\"unknown\":%d}\n",
		*n, ns, connected, unknown)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: claimsvc serve|client ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2:])
	case "client":
		client(os.Args[2:])
	case "bench":
		bench(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}
