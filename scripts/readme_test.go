package scripts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/internal/pyrun"
	"github.com/dlpack-go/dlpack/internal/refcheck"
)

// The README's zero-copy table is a door, not the reference: each cell stays short and the
// package column links to the package whose doc holds the detail (docs/zero-copy.md has every
// condition). TestREADMEZeroCopyTable holds it to that.
func TestREADMEZeroCopyTable(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	md := string(b)
	start := strings.Index(md, "\n## What is zero-copy\n")
	require.GreaterOrEqual(t, start, 0, "README.md has no \"## What is zero-copy\" section")
	section := md[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	link := regexp.MustCompile(`\]\(([^)#]+)\)`)
	rows := 0
	for i, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		rows++
		cells := splitCells(line)
		for _, c := range cells {
			assert.Less(t, utf8.RuneCountInString(c), 100, "README zero-copy table, row %d: cell of 100 characters or more: %s", i, c)
		}
		if rows <= 1 || len(cells) < 2 {
			continue // the header
		}
		targets := link.FindAllStringSubmatch(cells[1], -1)
		assert.NotEmpty(t, targets, "README zero-copy table, row %d: the package cell %q links to no package", i, cells[1])
		for _, m := range targets {
			assert.DirExists(t, filepath.Join(root, filepath.FromSlash(m[1])), "README zero-copy table, row %d links to a missing package", i)
		}
	}
	assert.Greater(t, rows, 10, "README.md's zero-copy table has too few rows")
}

// readmeBlock is a shell block of README.md that TestREADMECommands runs, marked by an HTML
// comment on the line before its fence:
//
//	<!-- readme-test: NAME; skip "TEXT"; expect "TEXT"; serve "REGEXP" -->
//
// skip: a command the test leaves out (replaced by ":"), with the reason in the README's own
// words (setup.sh, which CI has run just before; test.sh, which runs this test); expect: text
// the block's output must hold; serve: the block starts a server that runs until stopped, and it
// passes once its output matches REGEXP, when the test stops it. "readme-test: none (WHY)" marks a
// block that is not run.
type readmeBlock struct {
	name, script string
	line         int
	skip, expect []string
	serve        *regexp.Regexp
}

var (
	readmeMark   = regexp.MustCompile(`^<!-- readme-test: (.*) -->$`)
	readmeOption = regexp.MustCompile(`^(skip|expect|serve) "((?:[^"\\]|\\.)*)"$`)
)

// readmeBlocks returns the marked shell blocks of md, and fails the test for a shell block
// without a mark or a mark it cannot read.
func readmeBlocks(t *testing.T, md string) []readmeBlock {
	t.Helper()
	lines := strings.Split(md, "\n")
	var blocks []readmeBlock
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		fence := lines[i]
		end := i + 1
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		body := strings.Join(lines[i+1:min(end, len(lines))], "\n")
		start := i
		i = end
		if fence != "```sh" {
			continue
		}
		var m []string
		if start > 0 {
			m = readmeMark.FindStringSubmatch(lines[start-1])
		}
		if !assert.NotNil(t, m, "README.md:%d: a ```sh block without a <!-- readme-test: ... --> mark", start+1) {
			continue
		}
		if strings.HasPrefix(m[1], "none") {
			continue
		}
		parts := strings.Split(m[1], "; ")
		b := readmeBlock{name: parts[0], script: body, line: start + 1}
		for _, p := range parts[1:] {
			o := readmeOption.FindStringSubmatch(p)
			if !assert.NotNil(t, o, "README.md:%d: cannot read %q in the readme-test mark", start, p) {
				continue
			}
			v := strings.ReplaceAll(o[2], `\"`, `"`)
			switch o[1] {
			case "skip":
				assert.Contains(t, body, v, "README.md:%d: skip %q is not in the block", start, v)
				b.skip = append(b.skip, v)
				b.script = strings.ReplaceAll(b.script, v, ":")
			case "expect":
				b.expect = append(b.expect, v)
			case "serve":
				b.serve = regexp.MustCompile(v)
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// The README's commands that install or run things work as written: each marked shell block runs
// with bash (-euo pipefail) in a fresh clone of this checkout (uncommitted changes included), in
// the README's order, and must succeed and print what its mark expects. A block that starts a
// server (scripts/jupyter.sh) passes once the server says where it listens, and is stopped.
// CI runs it after scripts/setup.sh, as the README's first line does.
func TestREADMECommands(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	blocks := readmeBlocks(t, string(b))
	names := map[string]bool{}
	for _, bl := range blocks {
		names[bl.name] = true
	}
	for _, want := range []string{"tour", "tensorinfo", "python", "jupyter"} {
		assert.True(t, names[want], "README.md has no block marked readme-test: %s", want)
	}
	for _, tool := range []string{"go", "jupyter-notebook"} {
		if _, err := exec.LookPath(tool); err != nil {
			refcheck.Unavailable(t, "%s is not on PATH: run scripts/setup.sh first, as the README says", tool)
		}
	}
	if err := exec.Command(pyrun.Interpreter, "-c", "import numpy, torch, setuptools, wheel, venv").Run(); err != nil {
		refcheck.Unavailable(t, "Debian's python3 lacks NumPy, PyTorch, setuptools, wheel or venv: run scripts/setup.sh first (%v)", err)
	}
	clone := filepath.Join(t.TempDir(), "dlpack")
	cloneWorktree(t, clone)
	for _, bl := range blocks {
		t.Run(bl.name, func(t *testing.T) {
			script := "set -euo pipefail\n" + bl.script + "\n"
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = clone
			cmd.Env = append(os.Environ(), "BROWSER=true") // jupyter.sh: no browser to open
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out lockedBuffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			limit := time.After(5 * time.Minute)
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			stop := func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-done
				}
			}
		wait:
			for {
				select {
				case err := <-done:
					require.NoError(t, err, "README.md:%d, block %s:\n%s\n--- output:\n%s", bl.line, bl.name, bl.script, out.String())
					require.Nil(t, bl.serve, "README.md:%d, block %s: the server stopped by itself:\n%s", bl.line, bl.name, out.String())
					break wait
				case <-tick.C:
					if bl.serve != nil && bl.serve.MatchString(out.String()) {
						stop()
						break wait
					}
				case <-limit:
					stop()
					t.Fatalf("README.md:%d, block %s: still running after 5 minutes:\n%s", bl.line, bl.name, out.String())
				}
			}
			for _, e := range bl.expect {
				assert.Contains(t, out.String(), e, "README.md:%d, block %s", bl.line, bl.name)
			}
			t.Logf("README.md:%d, block %s:\n%s", bl.line, bl.name, out.String())
		})
	}
}

// lockedBuffer is a bytes.Buffer that a running command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
