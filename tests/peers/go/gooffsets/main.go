// SPDX-License-Identifier: GPL-2.0
//
// gooffsets: prints, from a Go executable's DWARF, the struct field offsets
// claimd's Go probes read, one "type.field offset" a line. The tests compare
// them with the table claimd uses when a binary has no DWARF.
//
//	gooffsets EXE
package main

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
)

var wanted = map[string][]string{
	"net/http.Request":     {"Method", "URL"},
	"net/url.URL":          {"Host", "Path"},
	"net/http.response":    {"conn", "wroteHeader", "status"},
	"net/http.conn":        {"rwc", "remoteAddr"},
	"crypto/tls.Conn":      {"conn"},
	"net.conn":             {"fd"},
	"net.netFD":            {"pfd"},
	"internal/poll.FD":     {"Sysfd"},
	"net/http.Response":    {"StatusCode"},
	"net.TCPAddr":          {"Port"},
	"net/http.persistConn": {"conn", "tlsState"},
	"runtime.g":            {"goid"},
	// grpc-go
	"google.golang.org/grpc/internal/transport.Stream":        {"method"},
	"google.golang.org/grpc/internal/transport.http2Server":   {"conn", "remoteAddr"},
	"google.golang.org/grpc/internal/status.Status":           {"s"},
	"google.golang.org/grpc/internal/status.Error":            {"e"},
	"google.golang.org/genproto/googleapis/rpc/status.Status": {"Code"},
	"google.golang.org/grpc.ClientConn":                       {"target"},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gooffsets EXE")
		os.Exit(2)
	}
	f, err := elf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	d, err := f.DWARF()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagStructType {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		fields, ok := wanted[name]
		if !ok {
			continue
		}
		delete(wanted, name)
		for {
			m, err := r.Next()
			if err != nil || m == nil || m.Tag == 0 {
				break
			}
			mn, _ := m.Val(dwarf.AttrName).(string)
			for _, f := range fields {
				if f == mn {
					fmt.Printf("%s.%s %d\n", name, mn, m.Val(dwarf.AttrDataMemberLoc))
				}
			}
		}
	}
}
