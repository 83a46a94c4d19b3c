package flightx

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"

	"github.com/dlpack-go/dlpack/internal/errs"
)

// SelfSigned makes a self-signed ECDSA P-256 server certificate for hosts (IP addresses or DNS
// names; at least one), valid from now for validFor, with a fresh key that never leaves the
// process: for a Server's WithTLS when no certificate from an authority is at hand. It returns
// the certificate and its PEM encoding, which a client trusts as its root
// (x509.CertPool.AppendCertsFromPEM, or pyarrow.flight.FlightClient(tls_root_certs=...)).
// A self-signed certificate proves only that the server holds its key: give clients the PEM
// through a channel you trust.
func SelfSigned(hosts []string, validFor time.Duration) (tls.Certificate, []byte, error) {
	if len(hosts) == 0 || validFor <= 0 {
		return tls.Certificate{}, nil, errs.Errorf(ErrTransport, "flightx: SelfSigned needs hosts and a positive validity (got %d hosts, %v)", len(hosts), validFor)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, errs.Errorf(ErrTransport, "flightx: generating a key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, errs.Errorf(ErrTransport, "flightx: generating a serial number: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0]},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own root
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, errs.Errorf(ErrTransport, "flightx: making a certificate for %v: %w", hosts, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, errs.Errorf(ErrTransport, "flightx: reading the certificate made: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
