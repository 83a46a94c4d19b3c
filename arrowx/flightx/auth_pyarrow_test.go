package flightx_test

import (
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/arrowx/flightx"
	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// TestAccessPyarrow: pyarrow.flight (an implementation not ours) against a server with TLS and
// tokens, trusting a certificate from SelfSigned: without a token or with a wrong one it is
// refused as unauthenticated, with the read-only token (learned through Flight's Handshake with
// pyarrow's authenticate_basic_token) it reads and is refused puts and deletes as unauthorized,
// with the read-write token it puts, gets and deletes.
func TestAccessPyarrow(t *testing.T) {
	python := refcheck.Venv(t)
	cert, certPEM, err := flightx.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	require.NoError(t, os.WriteFile(certFile, certPEM, 0o644))
	srv, addr := serve(t, flightx.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}}), flightx.WithTokens(tokens))
	require.NoError(t, srv.Put("w", core.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2), nil))
	names, vals := storeOf(t, srv)

	out, err := exec.Command(python, "testdata/auth_pyarrow.py", "grpc+tls://"+addr, certFile, rwToken, roToken).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, []string{
		"handshake authorization True",
		"none put unauthenticated",
		"none list unauthenticated",
		"wrong put unauthenticated",
		"ro put unauthorized",
		"ro delete unauthorized",
		"got w [[1.0, 2.0], [3.0, 4.0]]",
		"ro get ok",
		"rw put ok",
		"got x [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]",
		"rw get ok",
		"rw delete ok",
	}, strings.Split(strings.TrimSpace(string(out)), "\n"))
	gotNames, gotVals := storeOf(t, srv)
	assert.Equal(t, names, gotNames)
	assert.Equal(t, vals, gotVals)
}
