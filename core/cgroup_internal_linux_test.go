package core

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCgroupLimit reads the memory limits of a process's control group from a made-up
// hierarchy: the least along the path, swap counted at most as the system has it, v1 and v2,
// and the values that mean no limit.
func TestCgroupLimit(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name  string
		self  string
		files map[string]string // path under root: content
		swap  uint64
		want  uint64
	}{
		{"v2 limit", "0::/app\n", map[string]string{"app/memory.max": "2147483648\n"}, 0, 2 * gib},
		{"v2 limit and swap", "0::/app\n", map[string]string{"app/memory.max": "2147483648", "app/memory.swap.max": "1073741824"}, 4 * gib, 3 * gib},
		{"v2 swap beyond the system's", "0::/app\n", map[string]string{"app/memory.max": "2147483648", "app/memory.swap.max": "max"}, gib, 3 * gib},
		{"v2 parent lower", "0::/a/b\n", map[string]string{"a/memory.max": "1073741824", "a/b/memory.max": "max"}, 0, gib},
		{"v2 no limit", "0::/app\n", map[string]string{"app/memory.max": "max"}, 0, 0},
		{"v2 root group", "0::/\n", map[string]string{}, 0, 0},
		{"v2 hybrid", "0::/app\n", map[string]string{"unified/app/memory.max": "1073741824"}, 0, gib},
		{"v1 limit", "4:memory:/x/y\n0::/\n", map[string]string{"memory/x/y/memory.limit_in_bytes": "2147483648"}, gib, 3 * gib},
		{"v1 memsw lower", "4:memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "2147483648", "memory/x/memory.memsw.limit_in_bytes": "2684354560"}, gib, 2*gib + gib/2},
		{"v1 no limit", "4:memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "9223372036854771712"}, gib, 0},
		{"v1 shared controllers", "7:cpu,memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "1073741824"}, 0, gib},
		{"garbage", "not a cgroup file\n::\n", map[string]string{}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			self := filepath.Join(dir, "cgroup")
			require.NoError(t, os.WriteFile(self, []byte(c.self), 0o644))
			root := filepath.Join(dir, "fs")
			for p, v := range c.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(v), 0o644))
			}
			require.NoError(t, os.MkdirAll(root, 0o755))
			assert.Equal(t, c.want, cgroupLimit(self, root, c.swap))
		})
	}
	assert.Zero(t, cgroupLimit(filepath.Join(t.TempDir(), "missing"), "/sys/fs/cgroup", 0))
	assert.Positive(t, systemMemory(), "this machine's own")
}
