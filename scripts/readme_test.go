package scripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
