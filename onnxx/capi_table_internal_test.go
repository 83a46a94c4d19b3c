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

	"github.com/stretchr/testify/require"
)

// headerModule is the onnxruntime_go release whose onnxruntime_c_api.h is the header of
// APIVersion (ORT_API_VERSION 24). It is pinned here, not taken from go.mod: package ortgo may
// require a newer onnxruntime_go (whose header has more entries) without moving this package's
// table. Change both together when APIVersion moves.
const headerModule = "github.com/yalue/onnxruntime_go@v1.27.0"

// TestTableIndices reads the OrtApi struct of the onnxruntime_c_api.h that headerModule ships
// (the header APIVersion names) and checks every table index this package calls by against
// the name of the entry at that index: a wrong index would call another function of the table.
func TestTableIndices(t *testing.T) {
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
	} {
		require.Less(t, int(f), len(entries), "%s: index %d past the table's %d entries", name, f, len(entries))
		require.Equal(t, name, entries[f], "the entry at index %d", f)
	}
	require.Len(t, entries, int(fnGetTensorElementTypeAndShapeDataReference)+1,
		"the table of this header has entries past the last of APIVersion %d: a newer header, whose version APIVersion should say", APIVersion)
	require.Regexp(t, regexp.MustCompile(`#define ORT_API_VERSION `+strconv.Itoa(APIVersion)+`\b`), string(b))
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
