// SPDX-License-Identifier: GPL-2.0

//go:build !plain

// Serving over TLS (serve -tls), left out of the plain build (plain.go).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"time"
)

// selfSigned makes a certificate for 127.0.0.1, valid for a day.
func selfSigned() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "goservice"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// listenTLS listens on loopback over TLS; the port goes to the ready file once
// the certificate is made and it can be served.
func listenTLS(ready string) net.Listener {
	cert := selfSigned()
	ln, _ := listenReady(ready)
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
}
