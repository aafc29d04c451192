// SPDX-License-Identifier: GPL-2.0

//go:build plain

// The plain build (gohttp): neither a TLS server nor grpc-go in it.
package main

import (
	"fmt"
	"net"
	"os"
)

func notBuilt(what string) {
	fmt.Fprintf(os.Stderr, "%s: not in this build (-tags plain)\n", what)
	os.Exit(2)
}

func listenTLS(ready string) net.Listener {
	notBuilt("serve -tls")
	return nil
}

func grpcServe(args []string) { notBuilt("grpc-serve") }

func grpcLoad(args []string) { notBuilt("grpc-load") }
