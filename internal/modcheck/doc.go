// Package modcheck holds no code, only a test of how the checkout's Go modules import each other:
// an internal package is imported only by the module that holds it.
//
// The checkout is several modules: the root, github.com/dlpack-go/dlpack, and nested ones with
// their own go.mod (gomlxx, onnxx/ortgo, arrowx/duckdbx, and the test-only
// ggufx/internal/parsercheck and internal/gopeers). Go's rule for internal/ goes by import path,
// so onnxx/ortgo may compile an import of onnxx/internal/...; but a module promises no
// compatibility for its internal packages, and a user's build resolves the root and a nested
// module at versions of their own, so such an import can break at any release of the root. The
// rule holds for test files too, since `go test` of a nested module builds them against whatever
// version of the root that module resolves. A nested module builds its own helpers instead
// (onnxx/ortgo/internal/errs, onnxx/ortgo/internal/models) and may use the root's public
// packages, which in turn import the root's internal ones: that is the root's business.
//
// TestInternalImportsStayInTheirModule reads every .go file of the checkout, whatever its build
// constraints, so a file built only on another OS or with a tag is checked too.
package modcheck
