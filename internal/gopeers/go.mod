module github.com/dlpack-go/dlpack/internal/gopeers

go 1.26.5

// The peers run against numpyx and safetensorsx of this checkout (the root module, two levels
// up). This module is never required by anything: npyio and nlpodyssey/safetensors stay out of
// dlpack-go's go.mod.
replace github.com/dlpack-go/dlpack => ../../

require (
	codeberg.org/sbinet/npyio v0.14.0
	github.com/dlpack-go/dlpack v0.0.0
	github.com/nlpodyssey/safetensors v0.0.0-20250209183917-bfb01cc25f7c
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/campoy/embedmd v1.0.0 // indirect
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.43.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)
