// SPDX-License-Identifier: GPL-2.0
//
// goservice: a Go net/http service and load driver for claimd's Go tests.
//
//	goservice serve -listen 127.0.0.1:0 -ready FILE [-fail-mod N] [-call URL]... [-fanout | -pool N]
//	goservice load -url URL -n N -c C [-out FILE]
//
// serve answers /r/<id>. With -fail-mod N it fails (500) every id that is a
// multiple of N. With -call it calls each URL's /r/<id> first, one after the
// other, or with -fanout each on a goroutine of its own (WaitGroup); it
// fails (502) when any call failed (status >= 500 or a transport error).
// With -pool N the calls are made by N worker goroutines started before any
// request, handed over through a channel (the handler waits for them).
// The chosen port goes to the -ready file once it listens.
//
// load sends /r/0 .. /r/N-1 from C goroutines and writes a JSON summary
// (per status how many, and the ids that failed) to -out.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/ioutil"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

type urls []string

func (u *urls) String() string     { return strings.Join(*u, ",") }
func (u *urls) Set(s string) error { *u = append(*u, s); return nil }

var client = &http.Client{Timeout: 10 * time.Second}

// call fetches base/r/id; true when it failed.
func call(base, id string) bool {
	resp, err := client.Get(base + "/r/" + id)
	if err != nil {
		return true
	}
	io.Copy(ioutil.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode >= 500
}

func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	ready := fs.String("ready", "", "file to write the port to")
	failMod := fs.Int("fail-mod", 0, "fail ids that are multiples of this")
	fanout := fs.Bool("fanout", false, "make the calls on goroutines")
	pool := fs.Int("pool", 0, "make the calls on this many workers started first")
	var calls urls
	fs.Var(&calls, "call", "callee base URL (repeatable)")
	fs.Parse(args)

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
		failed := false
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
			wg.Wait()
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
		switch {
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
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *ready != "" {
		port := ln.Addr().(*net.TCPAddr).Port
		ioutil.WriteFile(*ready+".tmp", []byte(strconv.Itoa(port)), 0644)
		os.Rename(*ready+".tmp", *ready)
	}
	http.Serve(ln, nil)
}

func load(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	url := fs.String("url", "", "base URL")
	n := fs.Int("n", 200, "requests")
	c := fs.Int("c", 4, "concurrent clients")
	out := fs.String("out", "", "JSON summary file")
	fs.Parse(args)

	ids := make(chan int)
	var mu sync.Mutex
	statuses := map[string]int{}
	var failed []int
	var wg sync.WaitGroup
	for i := 0; i < *c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				status := "error"
				resp, err := client.Get(fmt.Sprintf("%s/r/%d", *url, id))
				if err == nil {
					io.Copy(ioutil.Discard, resp.Body)
					resp.Body.Close()
					status = strconv.Itoa(resp.StatusCode)
				}
				mu.Lock()
				statuses[status]++
				if err != nil || resp.StatusCode >= 500 {
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
	b, _ := json.Marshal(map[string]interface{}{"statuses": statuses, "failed": failed})
	if *out != "" {
		ioutil.WriteFile(*out, b, 0644)
	} else {
		fmt.Println(string(b))
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: goservice serve|load ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2:])
	case "load":
		load(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "usage: goservice serve|load ...")
		os.Exit(2)
	}
}
