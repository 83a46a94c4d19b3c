package main

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
)

// security are the flags of access control.
type security struct {
	cert, key string // -cert, -key: the server's certificate and key (PEM)
	tokenFile string // -token-file: the server's read-only token; the client's token
	ca        string // -ca: the client's root certificate (PEM): TLS when given
}

// serverOptions returns the server's options for listening on addr. On loopback, TLS and a token
// are optional (each on when its flags are given). Anywhere else both are on: a certificate and
// a token from the flags, else a self-signed certificate for the host's names and addresses and
// a random token, written to files (the certificate to hand to clients, the token readable by
// the owner only) next to a printed command that connects.
func (s security) serverOptions(addr string) ([]flightx.Option, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if (s.cert == "") != (s.key == "") {
		return nil, errors.New("give both -cert and -key, or neither")
	}
	var opts []flightx.Option
	var made []string // what was generated, to print
	switch {
	case s.cert != "":
		cert, err := tls.LoadX509KeyPair(s.cert, s.key)
		if err != nil {
			return nil, fmt.Errorf("-cert/-key: %w", err)
		}
		opts = append(opts, flightx.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	case !loopback:
		names := hostNames(host)
		cert, certPEM, err := flightx.SelfSigned(names, 30*24*time.Hour)
		if err != nil {
			return nil, err
		}
		s.ca, err = writeFile("flight-cert-*.pem", certPEM, 0o644)
		if err != nil {
			return nil, err
		}
		opts = append(opts, flightx.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
		made = append(made, "a self-signed certificate for "+strings.Join(names, ", ")+" in "+s.ca)
	}
	token := ""
	switch {
	case s.tokenFile != "":
		b, err := os.ReadFile(s.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("-token-file: %w", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return nil, fmt.Errorf("-token-file: %s is empty", s.tokenFile)
		}
	case !loopback:
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		token = hex.EncodeToString(b)
		if s.tokenFile, err = writeFile("flight-token-*", []byte(token+"\n"), 0o600); err != nil {
			return nil, err
		}
		made = append(made, "a random read-only token in "+s.tokenFile)
	}
	if token != "" {
		opts = append(opts, flightx.WithTokens(map[string]flightx.Role{token: flightx.ReadOnly}))
	}
	if len(made) > 0 {
		fmt.Printf("not on loopback: made %s\nclients connect with (copy the files over a channel you trust):\n"+
			"  go run ./examples/flight -fetch HOST:PORT", strings.Join(made, " and "))
		if s.ca != "" {
			fmt.Printf(" -ca %s", s.ca)
		}
		fmt.Printf(" -token-file %s\n", s.tokenFile)
	}
	return opts, nil
}

// clientOptions returns the client's options: TLS with -ca, a token with -token-file.
func (s security) clientOptions() ([]flightx.Option, error) {
	var opts []flightx.Option
	if s.ca != "" {
		pem, err := os.ReadFile(s.ca)
		if err != nil {
			return nil, fmt.Errorf("-ca: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-ca: no PEM certificate in %s", s.ca)
		}
		opts = append(opts, flightx.WithTLS(&tls.Config{RootCAs: roots}))
	}
	if s.tokenFile != "" {
		b, err := os.ReadFile(s.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("-token-file: %w", err)
		}
		opts = append(opts, flightx.WithToken(strings.TrimSpace(string(b))))
	}
	return opts, nil
}

// hostNames lists the names a self-signed certificate covers: host when it is specific, else
// the machine's name and the addresses of its interfaces.
func hostNames(host string) []string {
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{host}
	}
	var names []string
	if h, err := os.Hostname(); err == nil {
		names = append(names, h)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				names = append(names, n.IP.String())
			}
		}
	}
	return names
}

// writeFile writes b to a new file of the temporary directory named after pattern, with mode perm.
func writeFile(pattern string, b []byte, perm os.FileMode) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := f.Chmod(perm); err != nil {
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		return "", err
	}
	return filepath.Abs(f.Name())
}
