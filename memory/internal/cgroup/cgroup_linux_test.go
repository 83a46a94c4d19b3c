package cgroup

import (
	"os"
	"path/filepath"
	"strings"
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
			assert.Equal(t, c.want, cgroupLimit(self, defaultCgroupMounts(root), c.swap))
		})
	}
	assert.Zero(t, cgroupLimit(filepath.Join(t.TempDir(), "missing"), defaultCgroupMounts("/sys/fs/cgroup"), 0))
}

// TestCgroupLimitFromMountinfo finds the hierarchies where mountinfo says they are: mounted
// elsewhere than /sys/fs/cgroup, or showing only the process's own group, as in a container
// without a cgroup namespace, where /proc/self/cgroup names the group by its path on the host.
func TestCgroupLimitFromMountinfo(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name      string
		self      string
		mountinfo string            // %s: the test's directory
		files     map[string]string // path under the test's directory: content
		want      uint64
	}{
		{"v1 in a container without a cgroup namespace",
			"12:memory:/docker/0123abcd\n11:cpu,cpuacct:/docker/0123abcd\n0::/\n",
			"40 35 0:35 /docker/0123abcd %s/cg/memory ro,nosuid - cgroup cgroup rw,memory\n" +
				"41 35 0:36 /docker/0123abcd %s/cg/cpu ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n",
			map[string]string{"cg/memory/memory.limit_in_bytes": "1073741824", "cg/cpu/memory.limit_in_bytes": "1"},
			gib},
		{"v2 in a container without a cgroup namespace",
			"0::/system.slice/docker-0123.scope\n",
			"30 25 0:26 /system.slice/docker-0123.scope %s/cg rw shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
			map[string]string{"cg/memory.max": "2147483648"},
			2 * gib},
		{"v2 mounted elsewhere, a space in the path",
			"0::/app\n",
			"30 25 0:26 / %s/my\\040cgroups rw shared:4 - cgroup2 none rw\n",
			map[string]string{"my cgroups/app/memory.max": "1073741824", "my cgroups/memory.max": "max"},
			gib},
		{"v1 on an old layout",
			"5:memory,cpu:/jobs/7\n",
			"22 1 0:20 / %s/old/memory rw - cgroup cgroup rw,cpu,memory\n",
			map[string]string{"old/memory/jobs/7/memory.limit_in_bytes": "3221225472", "old/memory/jobs/memory.limit_in_bytes": "2147483648"},
			2 * gib},
		{"a group outside every mount",
			"0::/elsewhere\n",
			"30 25 0:26 /mine %s/cg rw - cgroup2 cgroup2 rw\n",
			map[string]string{"cg/memory.max": "1073741824"},
			0},
		{"no cgroup mounts, other file systems",
			"0::/\n",
			"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n23 22 0:21 / %s/proc rw - proc proc rw\nshort line - x\n",
			map[string]string{},
			0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			self, mountinfo := filepath.Join(dir, "cgroup"), filepath.Join(dir, "mountinfo")
			require.NoError(t, os.WriteFile(self, []byte(c.self), 0o644))
			require.NoError(t, os.WriteFile(mountinfo, []byte(strings.ReplaceAll(c.mountinfo, "%s", dir)), 0o644))
			for p, v := range c.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(v), 0o644))
			}
			assert.Equal(t, c.want, cgroupLimit(self, cgroupMounts(mountinfo), 0))
		})
	}
	assert.Nil(t, cgroupMounts(filepath.Join(t.TempDir(), "missing")))
	assert.Equal(t, "a b\tc\\d\\x", unescapeMountinfo(`a\040b\011c\134d\x`))
}
