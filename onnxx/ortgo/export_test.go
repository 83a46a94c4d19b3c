package ortgo

// Exported for the tests of package ortgo_test.
const (
	BindingRelease = bindingRelease
	BindingAPI     = bindingAPI
)
