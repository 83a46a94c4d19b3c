// Package cgroup reads the memory limit of this process's control group (cgroup v1 or v2), for
// package memory to refuse allocations the process could never have.
package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Limit is the memory plus swap (at most swap, the system's) that this process's control groups
// allow, found through /proc/self/mountinfo (or the usual places under /sys/fs/cgroup when it
// cannot be read); 0 means no limit found.
func Limit(swap uint64) uint64 {
	mounts := cgroupMounts("/proc/self/mountinfo")
	if len(mounts) == 0 {
		mounts = defaultCgroupMounts("/sys/fs/cgroup")
	}
	return cgroupLimit("/proc/self/cgroup", mounts, swap)
}

// cgroupMount is a mounted cgroup hierarchy that can limit memory: cgroup v2's, or a v1 one with
// the memory controller. Its directory dir shows the group root of the hierarchy (mountinfo's
// root field: "/" unless the mount shows a subtree, as a container without a cgroup namespace
// sees its own group), so a group path from /proc/self/cgroup is found under dir once root is
// taken off its front.
type cgroupMount struct {
	dir, root string
	v2        bool
}

// defaultCgroupMounts is where the hierarchies usually are, under fs (/sys/fs/cgroup), for when
// mountinfo cannot be read: v2 at fs or, on hybrid systems, at fs/unified, and v1's memory
// controller at fs/memory, each showing the whole hierarchy.
func defaultCgroupMounts(fs string) []cgroupMount {
	return []cgroupMount{{fs, "/", true}, {filepath.Join(fs, "unified"), "/", true}, {filepath.Join(fs, "memory"), "/", false}}
}

// cgroupMounts reads mountinfo (as /proc/self/mountinfo) and returns the cgroup2 mounts and the
// cgroup v1 mounts with the memory controller, wherever they are; nil if it cannot be read.
func cgroupMounts(mountinfo string) []cgroupMount {
	raw, err := os.ReadFile(mountinfo)
	if err != nil {
		return nil
	}
	var mounts []cgroupMount
	for _, line := range strings.Split(string(raw), "\n") {
		// id parent major:minor root mount-point options [optional fields...] - type source super-options
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		m := cgroupMount{dir: unescapeMountinfo(f[4]), root: unescapeMountinfo(f[3])}
		switch fstype, super := f[sep+1], f[sep+3]; {
		case fstype == "cgroup2":
			m.v2 = true
		case fstype == "cgroup" && slices.Contains(strings.Split(super, ","), "memory"):
		default:
			continue
		}
		mounts = append(mounts, m)
	}
	return mounts
}

// unescapeMountinfo undoes mountinfo's escapes: a space, tab, newline or backslash in a path is
// written as a backslash and three octal digits.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// cgroupLimit is the memory plus swap that the control groups named in the file self (as
// /proc/self/cgroup) allow, read from the hierarchies mounted as mounts: cgroup v2's memory.max
// and memory.swap.max, or v1's memory.limit_in_bytes and memory.memsw.limit_in_bytes, each the
// least along the path up to the group root the mount shows, and the least of all. Swap counts
// at most the system's swap. 0 means no limit found: no file, a group outside every mount, or
// values that mean none ("max", or v1's 2^63 rounded to a page).
func cgroupLimit(self string, mounts []cgroupMount, swap uint64) uint64 {
	raw, err := os.ReadFile(self)
	if err != nil {
		return 0
	}
	best := uint64(0)
	take := func(lim uint64) {
		if lim > 0 && (best == 0 || lim < best) {
			best = lim
		}
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		v2 := f[1] == ""
		if !v2 && !slices.Contains(strings.Split(f[1], ","), "memory") {
			continue
		}
		for _, m := range mounts {
			rel, ok := groupUnder(f[2], m.root)
			if m.v2 != v2 || !ok {
				continue
			}
			if v2 {
				mem, ok := leastAlong(m.dir, rel, "memory.max")
				if !ok || mem == noLimit {
					continue
				}
				sw, ok := leastAlong(m.dir, rel, "memory.swap.max")
				if !ok || sw > swap {
					sw = swap
				}
				take(mem + sw)
				continue
			}
			mem, ok := leastAlong(m.dir, rel, "memory.limit_in_bytes")
			if !ok || mem == noLimit {
				continue
			}
			lim := mem + swap
			if memsw, ok := leastAlong(m.dir, rel, "memory.memsw.limit_in_bytes"); ok && memsw < lim {
				lim = memsw
			}
			take(lim)
		}
	}
	return best
}

// groupUnder returns the path of group (as /proc/self/cgroup names it) below root, the group a
// mount shows, and false when the group is not inside it.
func groupUnder(group, root string) (string, bool) {
	switch {
	case root == "/":
		return group, true
	case group == root:
		return "/", true
	case strings.HasPrefix(group, root+"/"):
		return group[len(root):], true
	}
	return "", false
}

// noLimit stands for a limit that is none: "max", or anything from 2^62 up.
const noLimit = uint64(1) << 62

// leastAlong reads the limit called name in the group at base+path and in each of its
// ancestors up to base, and returns the least (noLimit for none); ok is false when the group's
// own file is missing.
func leastAlong(base, path, name string) (least uint64, ok bool) {
	least = noLimit
	dir := filepath.Join(base, path)
	for first := true; ; first = false {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil && first:
			return 0, false
		case err == nil:
			if v, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64); err == nil && v < least {
				least = v
			}
		}
		if dir == base || len(dir) <= len(base) {
			return least, true
		}
		dir = filepath.Dir(dir)
	}
}
