package onnxx

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headers are the onnxruntime_go releases whose onnxruntime_c_api.h declares the OrtApi table of
// APIVersion and of NewestAPIVersion, with the index of each table's last entry. They are pinned
// here, not taken from a go.mod (this module requires no onnxruntime_go, and onnxx/ortgo's may
// move without moving this package's table): change them with the constants.
var headers = []struct {
	module   string
	version  int
	lastSeen fn
}{
	{"github.com/yalue/onnxruntime_go@v1.27.0", APIVersion, fnGetTensorElementTypeAndShapeDataReference},
	{"github.com/yalue/onnxruntime_go@v1.38.0", NewestAPIVersion, 427}, // GetModelPackageApi
}

// TestTableIndices reads the OrtApi struct of the onnxruntime_c_api.h of each header (those of
// APIVersion and NewestAPIVersion) and checks every table index this package calls by against
// the name of the entry at that index: a wrong index would call another function of the table.
// The entries of versions after APIVersion are checked in the headers that have them.
func TestTableIndices(t *testing.T) {
	for _, h := range headers {
		t.Run(strconv.Itoa(h.version), func(t *testing.T) { testTableIndices(t, h.module, h.version, h.lastSeen) })
	}
}

func testTableIndices(t *testing.T, headerModule string, version int, last fn) {
	// downloaded if this module cache does not have it yet
	out, err := exec.Command("go", "mod", "download", "-json", headerModule).Output()
	require.NoError(t, err, "go mod download %s: %s", headerModule, out)
	var mod struct{ Dir, Error string }
	require.NoError(t, json.Unmarshal(out, &mod))
	require.Empty(t, mod.Error)
	require.NotEmpty(t, mod.Dir, "go mod download named no directory")
	b, err := os.ReadFile(filepath.Join(mod.Dir, "onnxruntime_c_api.h"))
	require.NoError(t, err)
	entries := ortAPIEntries(t, string(b))

	for f, name := range map[fn]string{
		fnGetErrorCode: "GetErrorCode", fnGetErrorMessage: "GetErrorMessage", fnCreateEnv: "CreateEnv",
		fnCreateSession: "CreateSession", fnCreateSessionFromArray: "CreateSessionFromArray", fnRun: "Run",
		fnCreateSessionOptions: "CreateSessionOptions", fnSetSessionLogSeverityLevel: "SetSessionLogSeverityLevel",
		fnSetSessionGraphOptimization: "SetSessionGraphOptimizationLevel", fnSetIntraOpNumThreads: "SetIntraOpNumThreads",
		fnSetInterOpNumThreads: "SetInterOpNumThreads", fnSessionGetInputCount: "SessionGetInputCount",
		fnSessionGetOutputCount: "SessionGetOutputCount", fnSessionGetInputTypeInfo: "SessionGetInputTypeInfo",
		fnSessionGetOutputTypeInfo: "SessionGetOutputTypeInfo", fnSessionGetInputName: "SessionGetInputName",
		fnSessionGetOutputName: "SessionGetOutputName", fnCreateTensorWithDataAsOrtValue: "CreateTensorWithDataAsOrtValue",
		fnGetTensorMutableData: "GetTensorMutableData", fnCastTypeInfoToTensorInfo: "CastTypeInfoToTensorInfo",
		fnGetOnnxTypeFromTypeInfo: "GetOnnxTypeFromTypeInfo", fnGetTensorElementType: "GetTensorElementType",
		fnGetDimensionsCount: "GetDimensionsCount", fnGetDimensions: "GetDimensions",
		fnGetSymbolicDimensions: "GetSymbolicDimensions", fnCreateMemoryInfo: "CreateMemoryInfo",
		fnCreateCpuMemoryInfo: "CreateCpuMemoryInfo", fnAllocatorFree: "AllocatorFree",
		fnGetAllocatorWithDefaultOptions: "GetAllocatorWithDefaultOptions", fnReleaseEnv: "ReleaseEnv",
		fnReleaseStatus: "ReleaseStatus", fnReleaseMemoryInfo: "ReleaseMemoryInfo", fnReleaseSession: "ReleaseSession",
		fnReleaseValue: "ReleaseValue", fnReleaseTypeInfo: "ReleaseTypeInfo", fnReleaseSessionOptions: "ReleaseSessionOptions",
		fnGetAvailableProviders: "GetAvailableProviders", fnReleaseAvailableProviders: "ReleaseAvailableProviders",
		fnRunWithBinding: "RunWithBinding", fnCreateIoBinding: "CreateIoBinding", fnReleaseIoBinding: "ReleaseIoBinding",
		fnBindInput: "BindInput", fnBindOutput: "BindOutput", fnBindOutputToDevice: "BindOutputToDevice",
		fnGetBoundOutputValues:          "GetBoundOutputValues",
		fnAppendExecutionProviderCUDAV2: "SessionOptionsAppendExecutionProvider_CUDA_V2",
		fnCreateCUDAProviderOptions:     "CreateCUDAProviderOptions", fnUpdateCUDAProviderOptions: "UpdateCUDAProviderOptions",
		fnReleaseCUDAProviderOptions: "ReleaseCUDAProviderOptions", fnSessionOptionsAppendProvider: "SessionOptionsAppendExecutionProvider",
		fnUpdateEnvWithCustomLogLevel:               "UpdateEnvWithCustomLogLevel",
		fnGetTensorElementTypeAndShapeDataReference: "GetTensorElementTypeAndShapeDataReference",
		fnEnableMemPattern:                          "EnableMemPattern", fnDisableMemPattern: "DisableMemPattern",
		fnEnableCpuMemArena: "EnableCpuMemArena", fnDisableCpuMemArena: "DisableCpuMemArena",
		fnCreateRunOptions: "CreateRunOptions", fnRunOptionsSetRunLogSeverityLevel: "RunOptionsSetRunLogSeverityLevel",
		fnRunOptionsSetRunTag: "RunOptionsSetRunTag", fnRunOptionsSetTerminate: "RunOptionsSetTerminate",
		fnReleaseRunOptions: "ReleaseRunOptions", fnAddSessionConfigEntry: "AddSessionConfigEntry",
		fnAddRunConfigEntry: "AddRunConfigEntry",
		// describeValueByInfo's, the reference path of BenchmarkDescribeValue
		fnGetTensorTypeAndShape: "GetTensorTypeAndShape", fnReleaseTensorTypeAndShapeInfo: "ReleaseTensorTypeAndShapeInfo",
		// version 25
		fnRunOptionsEnableProfiling: "RunOptionsEnableProfiling",
	} {
		if f > last {
			continue // an entry of a later version than this header's
		}
		require.Less(t, int(f), len(entries), "%s: index %d past the table's %d entries", name, f, len(entries))
		require.Equal(t, name, entries[f], "the entry at index %d", f)
	}
	require.Len(t, entries, int(last)+1,
		"the table of this header does not end where version %d's does: a header of another version", version)
	require.Regexp(t, regexp.MustCompile(`#define ORT_API_VERSION `+strconv.Itoa(version)+`\b`), string(b))
}

// TestAPIVersionFor: a library of ORT 1.x is asked for version x, within APIVersion and
// NewestAPIVersion; a version string that does not parse gets APIVersion.
func TestAPIVersionFor(t *testing.T) {
	for v, want := range map[string]int{
		"1.31.1": NewestAPIVersion, "1.32.0": NewestAPIVersion, "1.30.0": 30, "1.29.1": 29, "1.25.0": 25, "1.24.2": APIVersion, "1.20.0": APIVersion,
		"2.1.0": APIVersion, "": APIVersion, "1.x": APIVersion, "1": APIVersion,
	} {
		assert.Equal(t, want, apiVersionFor(v), "%q", v)
	}
}

// TestProfileNeedsVersion25: on a table older than version 25, RunOptions.Profile fails with
// ErrNoRuntime naming the versions, before the run (the loaded library's table is made to look
// like version 24's for the call).
func TestProfileNeedsVersion25(t *testing.T) {
	a, err := loaded()
	require.NoError(t, err)
	old := *a
	old.api = APIVersion
	_, err = old.runOptions(&RunOptions{Profile: filepath.Join(t.TempDir(), "p")})
	require.ErrorIs(t, err, ErrNoRuntime)
	assert.Regexp(t, `^onnxx: RunOptions\.Profile needs C API version 25 \(ONNX Runtime 1\.25 or later\); .* is ONNX Runtime 1\.\d+\.\d+ \(C API 24\)$`, err.Error())
	assert.Equal(t, NewestAPIVersion, a.api, "ORT %s gave the newest table this package knows", a.version)
}

// ortAPIEntries lists the names of the OrtApi struct's entries, in order: ORT_API2_STATUS(Name,
// ...), ORT_API_T(type, Name, ...), ORT_CLASS_RELEASE(X) (ReleaseX) and plain function pointers,
// type(ORT_API_CALL* Name)(...).
func ortAPIEntries(t *testing.T, header string) []string {
	start := strings.Index(header, "struct OrtApi {")
	require.GreaterOrEqual(t, start, 0, "no struct OrtApi in the header")
	end := strings.Index(header[start:], "\n};")
	require.Greater(t, end, 0)
	body := header[start+len("struct OrtApi {") : start+end]
	body = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(body, "")
	body = regexp.MustCompile(`//[^\n]*`).ReplaceAllString(body, "")
	body = regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(body, "")
	forms := []struct {
		re     *regexp.Regexp
		prefix string
	}{
		{regexp.MustCompile(`^ORT_API2_STATUS\s*\(\s*(\w+)`), ""},
		{regexp.MustCompile(`^ORT_API_T\s*\(\s*[^,]+,\s*(\w+)`), ""},
		{regexp.MustCompile(`^ORT_CLASS_RELEASE2?\s*\(\s*(\w+)\s*\)`), "Release"},
		{regexp.MustCompile(`\(\s*ORT_API_CALL\s*\*\s*(\w+)\s*\)`), ""},
	}
	var names []string
	for _, st := range strings.Split(body, ";") {
		st = strings.TrimSpace(st)
		if st == "" {
			continue
		}
		name := ""
		for _, f := range forms {
			if m := f.re.FindStringSubmatch(st); m != nil {
				name = f.prefix + m[1]
				break
			}
		}
		require.NotEmpty(t, name, "an OrtApi entry of no known form: %.80q", st)
		names = append(names, name)
	}
	return names
}
