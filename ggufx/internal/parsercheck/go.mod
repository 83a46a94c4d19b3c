module github.com/dlpack-go/dlpack/ggufx/internal/parsercheck

go 1.26.5

require (
	github.com/dlpack-go/dlpack v0.0.0
	github.com/gpustack/gguf-parser-go v0.28.1
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/henvic/httpretty v0.1.4 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/smallnest/ringbuffer v0.0.0-20241116012123-461381446e3d // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.29.0 // indirect
	golang.org/x/exp v0.0.0-20260112195511-716be5621a96 // indirect
	golang.org/x/mod v0.32.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.41.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

// The cross-check runs against the ggufx of this checkout (the root module, three levels up).
// This module is never required by anything: gguf-parser-go stays out of dlpack-go's go.mod.
replace github.com/dlpack-go/dlpack => ../../../
