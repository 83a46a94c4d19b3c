// Package gopeers holds the tests and benchmarks that run numpyx and safetensorsx beside the
// other Go implementations of their formats: codeberg.org/sbinet/npyio (.npy) and
// github.com/nlpodyssey/safetensors (.safetensors), which also checks that what each writes the
// other reads.
//
// It holds no code: only its tests matter. It is a module of its own so that those peers (and
// what they require) never become dependencies of dlpack-go: the root go.mod requires only what
// the module's packages import. Run it from this directory with
//
//	GOWORK=off go test ./...
//	GOWORK=off go test -run '^$' -bench . ./...
package gopeers
