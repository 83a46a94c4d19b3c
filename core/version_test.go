package core_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
)

// The newest entry of CHANGELOG.md is the module's version.
func TestModuleVersionMatchesChangelog(t *testing.T) {
	b, err := os.ReadFile("../CHANGELOG.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^## \[?v?(\d+\.\d+\.\d+)`).FindSubmatch(b)
	require.NotNil(t, m, "CHANGELOG.md has no version heading")
	require.Equal(t, core.ModuleVersion, string(m[1]))
}

// The README states the module's version next to core.ModuleVersion.
func TestModuleVersionMatchesReadme(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`version (\d+\.\d+\.\d+) \(` + "`core\\.ModuleVersion`").FindSubmatch(b)
	require.NotNil(t, m, "README.md does not state the version beside core.ModuleVersion")
	require.Equal(t, core.ModuleVersion, string(m[1]))
}
