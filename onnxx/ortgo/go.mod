module github.com/dlpack-go/dlpack/onnxx/ortgo

go 1.26.5

require (
	github.com/dlpack-go/dlpack v0.0.0
	github.com/stretchr/testify v1.12.1
	github.com/x448/float16 v0.8.4
	github.com/yalue/onnxruntime_go v1.38.0
)

require (
	github.com/ebitengine/purego v0.11.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

// Until dlpack-go is on a module proxy, the root module is this checkout's (see the README's
// install section).
replace github.com/dlpack-go/dlpack => ../../
