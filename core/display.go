package core

import "sync/atomic"

// The thin end of notebook display. Drawing tensors for people (a NumPy-style repr, an HTML
// table, a picture) lives in package github.com/dlpack-go/dlpack/display, which core cannot
// import; what stays here is the one method Jupyter's Go kernel (gophernotes) looks for on a
// value it shows, delegating to the renderer that package installs when it is imported.

// renderer is what SimpleRender delegates to; nil until SetRenderer.
var renderer atomic.Pointer[func(*Tensor) map[string]any]

// SetRenderer installs f as what SimpleRender returns. Package display calls it from its init,
// so importing that package (in a notebook: in the import cell, beside core) is all a program
// does; nothing else needs to call it. A nil f goes back to the one-line form.
func SetRenderer(f func(t *Tensor) map[string]any) {
	if f == nil {
		renderer.Store(nil)
		return
	}
	renderer.Store(&f)
}

// SimpleRender returns the tensor's representations by MIME type, which gophernotes displays
// for the last value of a cell. With package display imported these are its MIME forms
// (display.MIME: "text/plain" NumPy-style, "text/html" a captioned table, "image/png" a picture
// where the tensor reads as one); without it, "text/plain" alone, the String form.
func (t *Tensor) SimpleRender() map[string]interface{} {
	if f := renderer.Load(); f != nil {
		return (*f)(t)
	}
	return map[string]interface{}{"text/plain": t.String()}
}
