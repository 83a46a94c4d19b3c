package memory

// UseAVX512 turns the AVX-512 tile kernels on or off, for benchmarks that measure on a CPU with
// AVX-512 the AVX kernels a CPU without it runs. It reports whether this CPU and build have the
// AVX-512 kernels at all (if not, they stay off). Not for use while copies run.
func UseAVX512(on bool) (available bool) {
	haveAVX512 = on && avx512Available
	return avx512Available
}
