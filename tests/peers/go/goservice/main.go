// SPDX-License-Identifier: GPL-2.0
//
// goservice: a Go net/http service, a grpc-go unary service (grpc.go), and
// load drivers for them, for claimd's Go tests.
//
//	goservice serve -ready FILE [-fail-mod N [-slow-ms S]] [-call URL]... [-fanout [-wait-ms W] | -pool N] [-call-unix PATH] [-dial-unix PATH] [-tls] [-gc]
//	goservice load -url URL -n N -c C [-out FILE]
//	goservice grpc-serve -ready FILE [-fail-mod N] [-call HOST:PORT] [-gc]
//	goservice grpc-load -addr HOST:PORT -n N -c C [-out FILE]
//
// serve answers /r/<id>. With -fail-mod N it fails (500) every id that is a
// multiple of N. With -call it calls each URL's /r/<id> first, one after the
// other, or with -fanout each on a goroutine of its own (WaitGroup); it
// fails (502) when any call failed (status >= 500 or a transport error).
// With -wait-ms W it waits for its fan-out W ms at most (a select on a
// timer), answers 504 when they are not all back, and leaves them running.
// With -slow-ms S the ids -fail-mod names are slow instead of failed: they
// are answered 200 after S ms.
// With -gc a goroutine collects garbage without pause: each collection asks
// every goroutine to stop at its next function prologue, which then runs
// again from its entry.
// With -pool N the calls are made by N worker goroutines started before any
// request, handed over through a channel (the handler waits for them).
// With -call-unix PATH every call goes over that socket file, on a new
// connection each (net/http dials it on a goroutine of its own). With
// -dial-unix PATH the handler itself dials that socket file and asks it for
// /r/<id> over the connection (as go-redis dials on its caller's goroutine).
// It listens on loopback; the chosen port goes to the -ready file. With -tls it
// serves HTTP/1.1 over TLS with a certificate it makes itself (tls.go); its
// calls and the driver's accept any certificate.
//
// Built with -tags plain (gohttp), it is a plain net/http program: no TLS
// server and no grpc-go linked in (plain.go stands in for tls.go and
// grpc.go), the kind claimd follows by its syscalls with one probe per call.
//
// load sends /r/0 .. /r/N-1 from C goroutines and writes a JSON summary
// (per status how many, and the ids that failed) to -out.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/ioutil"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

type urls []string

func (u *urls) String() string     { return strings.Join(*u, ",") }
func (u *urls) Set(s string) error { *u = append(*u, s); return nil }

var client = &http.Client{
	Timeout: 10 * time.Second,
	// HTTP/1.1 over TLS too: a Transport of its own does not try HTTP/2.
	// Idle connections kept for every concurrent caller: no dial per call.
	Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		MaxIdleConnsPerHost: 256,
	},
}

// collectWithoutPause runs one garbage collection after another (-gc).
func collectWithoutPause() {
	for {
		runtime.GC()
	}
}

// callQuery, when set, follows each call's target (-call-query): a call
// that does not repeat its request's target.
var callQuery string

// call fetches base/r/id; true when it failed.
func call(base, id string) bool {
	target := base + "/r/" + id
	if callQuery != "" {
		target += "?" + callQuery
	}
	resp, err := client.Get(target)
	if err != nil {
		return true
	}
	io.Copy(ioutil.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode >= 500
}

// dialCall dials the socket file at path on the calling goroutine and asks
// it for /r/id, a connection of its own; true when it failed.
func dialCall(path, id string) bool {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return true
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /r/%s HTTP/1.1\r\nHost: be\r\nConnection: close\r\n\r\n", id)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return true
	}
	io.Copy(ioutil.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode >= 500
}

func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	ready := fs.String("ready", "", "file to write the port to")
	failMod := fs.Int("fail-mod", 0, "fail ids that are multiples of this")
	fanout := fs.Bool("fanout", false, "make the calls on goroutines")
	gc := fs.Bool("gc", false, "collect garbage without pause")
	pool := fs.Int("pool", 0, "make the calls on this many workers started first")
	waitMs := fs.Int("wait-ms", 0, "with -fanout: wait this long at most, then answer 504")
	slowMs := fs.Int("slow-ms", 0, "the ids -fail-mod names answer 200 this late instead")
	useTLS := fs.Bool("tls", false, "serve over TLS")
	fs.StringVar(&callQuery, "call-query", "", "add this query to each call's target")
	callUnix := fs.String("call-unix", "", "make the calls over this socket file, a connection each")
	dialUnix := fs.String("dial-unix", "", "dial this socket file in the handler and call it there")
	var calls urls
	fs.Var(&calls, "call", "callee base URL (repeatable)")
	fs.Parse(args)
	if *callUnix != "" {
		client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", *callUnix)
			},
		}}
	}
	if *gc {
		go collectWithoutPause()
	}

	type job struct {
		url, id string
		failed  chan bool
	}
	jobs := make(chan job)
	for i := 0; i < *pool; i++ {
		go func() {
			for j := range jobs {
				j.failed <- call(j.url, j.id)
			}
		}()
	}

	http.HandleFunc("/r/", func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/r/")
		n, _ := strconv.Atoi(id)
		failed, gaveUp := false, false
		if *failMod > 0 && n%*failMod == 0 && *slowMs > 0 {
			time.Sleep(time.Duration(*slowMs) * time.Millisecond)
			fmt.Fprintf(w, "ok %s, late\n", id)
			return
		}
		if *fanout {
			var wg sync.WaitGroup
			var mu sync.Mutex
			for _, u := range calls {
				wg.Add(1)
				go func(u string) {
					defer wg.Done()
					if call(u, id) {
						mu.Lock()
						failed = true
						mu.Unlock()
					}
				}(u)
			}
			if *waitMs > 0 {
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(time.Duration(*waitMs) * time.Millisecond):
					gaveUp = true
				}
			} else {
				wg.Wait()
			}
		} else if *pool > 0 {
			for _, u := range calls {
				j := job{u, id, make(chan bool)}
				jobs <- j
				if <-j.failed {
					failed = true
				}
			}
		} else {
			for _, u := range calls {
				if call(u, id) {
					failed = true
				}
			}
		}
		if *dialUnix != "" && dialCall(*dialUnix, id) {
			failed = true
		}
		// Given up: failed is not read, its calls may still set it.
		switch {
		case gaveUp:
			w.WriteHeader(http.StatusGatewayTimeout)
			fmt.Fprintf(w, "callees too slow\n")
		case failed:
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "callee failed\n")
		case *failMod > 0 && n%*failMod == 0:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "failed\n")
		default:
			fmt.Fprintf(w, "ok %s\n", id)
		}
	})
	var ln net.Listener
	if *useTLS {
		ln = listenTLS(*ready)
	} else {
		ln, _ = listenReady(*ready)
	}
	http.Serve(ln, nil)
}

// listenReady listens on loopback and writes the port to the ready file.
func listenReady(ready string) (net.Listener, int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if ready != "" {
		ioutil.WriteFile(ready+".tmp", []byte(strconv.Itoa(port)), 0644)
		os.Rename(ready+".tmp", ready)
	}
	return ln, port
}

// drive runs ids 0 .. n-1 through do from c goroutines and writes a JSON
// summary: per outcome (do's label) how many, under key, and the ids that
// failed.
func drive(args []string, target string, key string, do func(t string, id int) (string, bool)) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	t := fs.String(target, "", "where to send the requests")
	n := fs.Int("n", 200, "requests")
	c := fs.Int("c", 4, "concurrent clients")
	out := fs.String("out", "", "JSON summary file")
	fs.Parse(args)

	ids := make(chan int)
	var mu sync.Mutex
	outcomes := map[string]int{}
	var failed []int
	var wg sync.WaitGroup
	for i := 0; i < *c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				label, bad := do(*t, id)
				mu.Lock()
				outcomes[label]++
				if bad {
					failed = append(failed, id)
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < *n; i++ {
		ids <- i
	}
	close(ids)
	wg.Wait()
	b, _ := json.Marshal(map[string]interface{}{key: outcomes, "failed": failed})
	if *out != "" {
		ioutil.WriteFile(*out, b, 0644)
	} else {
		fmt.Println(string(b))
	}
}

func load(args []string) {
	drive(args, "url", "statuses", func(url string, id int) (string, bool) {
		resp, err := client.Get(fmt.Sprintf("%s/r/%d", url, id))
		if err != nil {
			return "error", true
		}
		io.Copy(ioutil.Discard, resp.Body)
		resp.Body.Close()
		return strconv.Itoa(resp.StatusCode), resp.StatusCode >= 500
	})
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: goservice serve|load|grpc-serve|grpc-load ...")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2:])
	case "load":
		load(os.Args[2:])
	case "grpc-serve":
		grpcServe(os.Args[2:])
	case "grpc-load":
		grpcLoad(os.Args[2:])
	default:
		usage()
	}
}
