package pyexchange

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/internal/errs"
)

// ErrRegister: a function could not be registered (a bad name, a parameter or result type
// Python cannot pass, a name taken twice). Register's errors wrap it and say what was wrong.
var ErrRegister = errors.New("pyexchange: cannot register function")

// kind is how a parameter or result crosses between Python and Go. The values are shared with
// call.h (PXG_K_*) and the Python module.
type kind uint8

const (
	kindTensor kind = 1 + iota // *core.Tensor: any __dlpack__ object in, an array out
	kindInt                    // int, int8 ... int64: a Python int
	kindUint                   // uint, uint8 ... uint64, uintptr: a Python int >= 0
	kindFloat                  // float32, float64: a Python float (or int)
	kindBool                   // bool: True or False
	kindString                 // string: a Python str
)

var kindNames = [...]string{kindTensor: "tensor", kindInt: "int", kindUint: "int", kindFloat: "float",
	kindBool: "bool", kindString: "str"}

var (
	tensorType = reflect.TypeFor[*core.Tensor]()
	errorType  = reflect.TypeFor[error]()
)

// kindOf returns how values of type t cross, or 0 if they cannot.
func kindOf(t reflect.Type) kind {
	if t == tensorType {
		return kindTensor
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Bool:
		return kindBool
	case reflect.String:
		return kindString
	}
	return 0
}

// param is one parameter or result of a registered function.
type param struct {
	Name string       `json:"name,omitempty"`
	Kind string       `json:"kind"` // kindNames
	Type string       `json:"type"` // the Go type, e.g. "float32", "*core.Tensor"
	kind kind         // as above, for the dispatcher
	typ  reflect.Type // the Go type, to convert to
}

// function is a registered Go function.
type function struct {
	Name    string  `json:"name"`
	Doc     string  `json:"doc"`
	Params  []param `json:"params"`
	Results []param `json:"results"` // the error result is not listed
	fn      reflect.Value
	// direct calls fn without reflect for the most common signatures (see directOf): ts are
	// the tensor arguments in order, f the float64 argument if any; the tensor result or nil.
	direct func(ts []*core.Tensor, f float64) (*core.Tensor, error)
}

// directOf returns a reflect-free caller for the common signatures below, or nil: a call
// through reflect.Value.Call costs more than the rest of the Go side of a call.
func directOf(fn any) func(ts []*core.Tensor, f float64) (*core.Tensor, error) {
	switch fn := fn.(type) {
	case func(*core.Tensor) error:
		return func(ts []*core.Tensor, _ float64) (*core.Tensor, error) { return nil, fn(ts[0]) }
	case func(*core.Tensor, float64) error:
		return func(ts []*core.Tensor, f float64) (*core.Tensor, error) { return nil, fn(ts[0], f) }
	case func(*core.Tensor, *core.Tensor) error:
		return func(ts []*core.Tensor, _ float64) (*core.Tensor, error) { return nil, fn(ts[0], ts[1]) }
	case func(*core.Tensor) (*core.Tensor, error):
		return func(ts []*core.Tensor, _ float64) (*core.Tensor, error) { return fn(ts[0]) }
	case func(*core.Tensor, *core.Tensor) (*core.Tensor, error):
		return func(ts []*core.Tensor, _ float64) (*core.Tensor, error) { return fn(ts[0], ts[1]) }
	}
	return nil
}

var registry struct {
	sync.RWMutex
	funcs  []*function // indexed by function id, the order of registration
	byName map[string]int
	// published is funcs as of the last registration, for lookupFunc without the lock (a
	// function, once registered, never changes)
	published atomic.Pointer[[]*function]
}

// Register makes fn callable from Python as the attribute name of dlpackgo.Library, with doc as
// its docstring. Call it from the c-shared library's init function, once per function (Python
// lists the functions when it loads the library; later registrations are not seen by a Library
// made before them):
//
//	func init() {
//		pyexchange.Register("scale", scale, "scale(x, factor)\n\nMultiplies x by factor in place.")
//	}
//
// fn must be a non-variadic func whose parameters are *core.Tensor (Python passes any object
// with __dlpack__, shared without copying), Go integers (a Python int, range-checked), floats,
// bool or string, and whose last result is error; the results before it may be *core.Tensor
// (returned to Python as arrays, without copying) or the same scalar types. Anything else is
// refused here, with ErrRegister, not at call time.
//
// name must be a Python identifier not starting with "_" and not registered before. If the
// first line of doc has the form "name(a, b, ...)" with one identifier per parameter, none
// starting with "_" (the names of the generated Python function's own) nor "returns", those are
// the parameter names Python shows (help, TypeErrors); otherwise they are arg0, arg1, ...
//
// While fn runs, the Python thread that called it has released the GIL, and its tensor arguments
// are held for the whole call (an imported argument by its own reference, which only the call lets
// go when fn returns; a dlpackgo.Tensor's by a view of the call's own, so that neither fn releasing
// it nor another thread releasing the Tensor changes what the other sees): fn may read and write
// their memory, make views of them and keep those beyond the call. The tensors it returns are
// exported with views of their own (tensors that cannot be shared, such as read-only or negatively
// strided ones, are copied once, and every consumer of the result shares that copy, without
// IS_COPIED: see Shareable), so fn keeps ownership of what it returns. A panic in fn
// is recovered and raised in Python as dlpackgo.GoPanic; a non-nil error is raised as a Python
// exception carrying its message (see ExceptionFor).
func Register(name string, fn any, doc string) error {
	f, err := describeFunc(name, fn, doc)
	if err != nil {
		return err
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.byName[name]; dup {
		return errs.Errorf(ErrRegister, "pyexchange: %q is already registered", name)
	}
	if registry.byName == nil {
		registry.byName = map[string]int{}
	}
	registry.byName[name] = len(registry.funcs)
	registry.funcs = append(registry.funcs, f)
	funcs := registry.funcs
	registry.published.Store(&funcs)
	return nil
}

// MustRegister is Register that panics on error, for package-level registration of functions
// whose signatures are known to be right.
func MustRegister(name string, fn any, doc string) {
	if err := Register(name, fn, doc); err != nil {
		panic(err)
	}
}

// describeFunc validates fn and builds its description.
func describeFunc(name string, fn any, doc string) (*function, error) {
	if !isIdentifier(name) || strings.HasPrefix(name, "_") {
		return nil, errs.Errorf(ErrRegister, "pyexchange: name %q is not a Python identifier without a leading _", name)
	}
	v := reflect.ValueOf(fn)
	if fn == nil || v.Kind() != reflect.Func || v.IsNil() {
		return nil, errs.Errorf(ErrRegister, "pyexchange: %s: fn is %T, want a non-nil func", name, fn)
	}
	t := v.Type()
	if t.IsVariadic() {
		return nil, errs.Errorf(ErrRegister, "pyexchange: %s: variadic functions are not supported (%v)", name, t)
	}
	if t.NumOut() == 0 || t.Out(t.NumOut()-1) != errorType {
		return nil, errs.Errorf(ErrRegister, "pyexchange: %s: the last result of %v must be error", name, t)
	}
	if t.NumIn() > maxParams || t.NumOut()-1 > maxResults {
		return nil, errs.Errorf(ErrRegister, "pyexchange: %s: %v has more than %d parameters or %d results",
			name, t, maxParams, maxResults)
	}
	f := &function{Name: name, Doc: doc, fn: v, Params: []param{}, Results: []param{}, direct: directOf(fn)}
	names := paramNames(name, doc, t.NumIn())
	for i := range t.NumIn() {
		k := kindOf(t.In(i))
		if k == 0 {
			return nil, errs.Errorf(ErrRegister, "pyexchange: %s: parameter %d has type %v; want *core.Tensor, an integer, a float, bool or string",
				name, i, t.In(i))
		}
		f.Params = append(f.Params, param{Name: names[i], Kind: kindNames[k], Type: t.In(i).String(), kind: k, typ: t.In(i)})
	}
	for i := range t.NumOut() - 1 {
		k := kindOf(t.Out(i))
		if k == 0 {
			return nil, errs.Errorf(ErrRegister, "pyexchange: %s: result %d has type %v; want *core.Tensor, an integer, a float, bool or string",
				name, i, t.Out(i))
		}
		f.Results = append(f.Results, param{Kind: kindNames[k], Type: t.Out(i).String(), kind: k, typ: t.Out(i)})
	}
	return f, nil
}

// Limits of a registered function's signature (the C side keeps them in fixed arrays).
const (
	maxParams  = 32
	maxResults = 8
)

// paramNames returns the names that the first line of doc gives the parameters,
// "name(a, b, c)", or arg0, arg1, ... when it does not give exactly n identifiers.
func paramNames(name, doc string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("arg%d", i)
	}
	line, _, _ := strings.Cut(doc, "\n")
	line = strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(line, name+"(")
	if !ok {
		return names
	}
	inner, _, ok := strings.Cut(rest, ")")
	if !ok {
		return names
	}
	var got []string
	if strings.TrimSpace(inner) != "" {
		for _, p := range strings.Split(inner, ",") {
			got = append(got, strings.TrimSpace(p))
		}
	}
	if len(got) != n {
		return names
	}
	seen := map[string]bool{}
	for _, g := range got {
		if !isIdentifier(g) || strings.HasPrefix(g, "_") || seen[g] || g == "returns" {
			return names
		}
		seen[g] = true
	}
	return got
}

// pythonKeywords are the words isIdentifier refuses.
var pythonKeywords = map[string]bool{"False": true, "None": true, "True": true, "and": true, "as": true,
	"assert": true, "async": true, "await": true, "break": true, "class": true, "continue": true,
	"def": true, "del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true, "is": true, "lambda": true,
	"nonlocal": true, "not": true, "or": true, "pass": true, "raise": true, "return": true,
	"try": true, "while": true, "with": true, "yield": true}

// isIdentifier reports whether s is an ASCII Python identifier and not a keyword.
func isIdentifier(s string) bool {
	if s == "" || pythonKeywords[s] {
		return false
	}
	for i, r := range s {
		if r > unicode.MaxASCII || !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// lookupFunc returns the function registered under id.
func lookupFunc(id int) *function {
	p := registry.published.Load()
	if p == nil || id < 0 || id >= len(*p) {
		return nil
	}
	return (*p)[id]
}

// Functions returns the names of the registered functions, in the order of registration.
func Functions() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, len(registry.funcs))
	for i, f := range registry.funcs {
		names[i] = f.Name
	}
	return names
}
