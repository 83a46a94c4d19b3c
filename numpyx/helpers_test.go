package numpyx_test

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawNPZ builds a zip archive of the given name/content pairs, deflated or stored.
func rawNPZ(t testing.TB, deflate bool, pairs ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(pairs); i += 2 {
		fh := &zip.FileHeader{Name: pairs[i].(string), Method: zip.Store}
		if deflate {
			fh.Method = zip.Deflate
		}
		w, err := zw.CreateHeader(fh)
		require.NoError(t, err)
		if b, _ := pairs[i+1].([]byte); b != nil {
			_, err = w.Write(b)
			require.NoError(t, err)
		}
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}
