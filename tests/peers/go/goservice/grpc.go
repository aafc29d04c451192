// SPDX-License-Identifier: GPL-2.0

//go:build !plain

// The gRPC side of goservice: a unary service on the health service
// grpc-go ships (no generated code needed), and its driver.
//
// grpc-serve answers Check for the service name "/r/<id>". With -fail-mod N
// it fails every id that is a multiple of N with UNAVAILABLE. With -call it
// first calls the same Check on that address and, when the call fails,
// fails too (UNAVAILABLE, passed up). With -gc, as serve's. grpc-load
// calls Check for "/r/0" .. "/r/N-1" and counts the codes.
//
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	health "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

type server struct {
	failMod int
	callee  health.HealthClient
}

func (s *server) Check(ctx context.Context, req *health.HealthCheckRequest) (*health.HealthCheckResponse, error) {
	n, _ := strconv.Atoi(strings.TrimPrefix(req.Service, "/r/"))
	if s.callee != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := s.callee.Check(cctx, req); err != nil {
			return nil, status.Error(codes.Unavailable, "callee failed")
		}
	}
	if s.failMod > 0 && n%s.failMod == 0 {
		return nil, status.Error(codes.Unavailable, "failed")
	}
	return &health.HealthCheckResponse{Status: health.HealthCheckResponse_SERVING}, nil
}

func (s *server) Watch(req *health.HealthCheckRequest, w health.Health_WatchServer) error {
	return status.Error(codes.Unimplemented, "no watch")
}

func grpcServe(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	ready := fs.String("ready", "", "file to write the port to")
	failMod := fs.Int("fail-mod", 0, "fail ids that are multiples of this")
	call := fs.String("call", "", "callee address")
	gc := fs.Bool("gc", false, "collect garbage without pause")
	fs.Parse(args)
	if *gc {
		go collectWithoutPause()
	}

	s := &server{failMod: *failMod}
	if *call != "" {
		cc, err := grpc.Dial(*call, grpc.WithInsecure())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s.callee = health.NewHealthClient(cc)
	}
	g := grpc.NewServer()
	health.RegisterHealthServer(g, s)
	ln, _ := listenReady(*ready)
	g.Serve(ln)
}

func grpcLoad(args []string) {
	var hc health.HealthClient
	var once sync.Once
	drive(args, "addr", "codes", func(addr string, id int) (string, bool) {
		once.Do(func() {
			cc, err := grpc.Dial(addr, grpc.WithInsecure())
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			hc = health.NewHealthClient(cc)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := hc.Check(ctx, &health.HealthCheckRequest{Service: fmt.Sprintf("/r/%d", id)})
		return status.Code(err).String(), err != nil
	})
}
