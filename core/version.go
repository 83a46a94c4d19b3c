package core

// ModuleVersion is the version of this module (github.com/dlpack-go/dlpack), following semantic
// versioning; CHANGELOG.md says what each version brought. It is not the DLPack ABI version
// (see Version).
const ModuleVersion = "0.9.1"
