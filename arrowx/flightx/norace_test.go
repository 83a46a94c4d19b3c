//go:build !race

package flightx_test

// raceOn: the race detector is on (its instrumentation makes the load test slower).
const raceOn = false
