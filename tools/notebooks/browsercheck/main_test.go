package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dlpack-go/dlpack/core"
	"github.com/dlpack-go/dlpack/display"
)

// page writes NAME.ipynb, whose outputs are those of a tensor and of a picture, and NAME.html,
// a page that shows the tensor's HTML through show and the picture as nbconvert does.
func page(t *testing.T, dir, name string, show func(tensorHTML string) string) string {
	t.Helper()
	return pageOf(t, dir, name, core.MustFromSlice(make([]float32, 12*10), 12, 10), show)
}

// pageOf is page for the tensor x.
func pageOf(t *testing.T, dir, name string, x *core.Tensor, show func(tensorHTML string) string) string {
	t.Helper()
	m := display.MIME(x)
	gray := image.NewGray(image.Rect(0, 0, 30, 20))
	for i := range gray.Pix {
		gray.Pix[i] = uint8(i)
	}
	gray.Set(0, 0, color.Gray{Y: 255})
	var pic bytes.Buffer
	require.NoError(t, png.Encode(&pic, gray))
	picB64 := base64.StdEncoding.EncodeToString(pic.Bytes())

	nb := map[string]any{"cells": []any{map[string]any{"outputs": []any{
		map[string]any{"output_type": "execute_result", "data": map[string]any{
			"text/html": m["text/html"], "text/plain": m["text/plain"],
			"image/png": base64.StdEncoding.EncodeToString(m["image/png"].([]byte))}},
		map[string]any{"output_type": "display_data", "data": map[string]any{"image/png": picB64}},
		map[string]any{"output_type": "stream", "text": "hello\n"},
	}}}}
	js, err := json.Marshal(nb)
	require.NoError(t, err)
	path := filepath.Join(dir, name+".ipynb")
	require.NoError(t, os.WriteFile(path, js, 0o644))
	body := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head><body>
<h1>A notebook</h1>
<div class="jp-OutputArea-output">` + show(m["text/html"].(string)) + `</div>
<div class="jp-OutputArea-output"><img src="data:image/png;base64,` + picB64 + `"></div>
<div class="jp-OutputArea-output"><pre>hello</pre></div>
</body></html>`
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".html"), []byte(body), 0o644))
	return path
}

func chromium(t *testing.T) string {
	t.Helper()
	_, err := os.Stat("/usr/bin/chromium")
	require.NoError(t, err, "Debian's chromium is required (scripts/setup.sh installs it)")
	return "/usr/bin/chromium"
}

func TestCheckPassesAGoodPage(t *testing.T) {
	dir := t.TempDir()
	nb := page(t, dir, "good", func(h string) string { return h })
	problems, err := check(chromium(t), nb, dir)
	require.NoError(t, err)
	assert.Empty(t, problems)
	rep, err := os.ReadFile(filepath.Join(dir, "good.json"))
	require.NoError(t, err)
	assert.Contains(t, string(rep), `"caption": "float32 · shape (12, 10)`)
	shot, err := os.Open(filepath.Join(dir, "good.png"))
	require.NoError(t, err)
	defer shot.Close()
	cfg, err := png.DecodeConfig(shot)
	require.NoError(t, err)
	assert.Equal(t, 1280, cfg.Width)
}

func TestCheckFailsABrokenPage(t *testing.T) {
	dir := t.TempDir()
	// the tensor's HTML shown as text (escaped), as a kernel that sent it as text/plain would
	nb := page(t, dir, "escaped", func(h string) string { return "<pre>" + html.EscapeString(h) + "</pre>" })
	problems, err := check(chromium(t), nb, dir)
	require.NoError(t, err)
	joined := strings.Join(problems, "\n")
	assert.Contains(t, joined, "0 tensors in the page, the notebook displayed 1")
	assert.Contains(t, joined, "markup shown as text")

	// a picture that does not decode, and a caption that says something else
	nb = page(t, dir, "broken", func(h string) string {
		h = strings.Replace(h, "base64,", "base64,AAAA", 1)
		return strings.Replace(h, "float32 · ", "float64 · ", 1)
	})
	problems, err = check(chromium(t), nb, dir)
	require.NoError(t, err)
	joined = strings.Join(problems, "\n")
	assert.Contains(t, joined, "picture 0 decoded at 0×0 (complete: true), want 10×12")
	assert.Contains(t, joined, `caption "float64 · shape (12, 10)`)
}

func TestScreenshotOfABlankPageFails(t *testing.T) {
	dir := t.TempDir()
	blank := image.NewRGBA(image.Rect(0, 0, 1280, 600))
	for i := range blank.Pix {
		blank.Pix[i] = 255
	}
	f, err := os.Create(filepath.Join(dir, "blank.png"))
	require.NoError(t, err)
	require.NoError(t, png.Encode(f, blank))
	require.NoError(t, f.Close())
	assert.Contains(t, strings.Join(checkScreenshot(filepath.Join(dir, "blank.png"), 1280, 600), ""), "looks blank")
	assert.Contains(t, strings.Join(checkScreenshot(filepath.Join(dir, "blank.png"), 1280, 700), ""), "want 1280×700")
}

// A 96×96 tensor's elided table (21 columns of wide numbers) is wider than the page: it scrolls in
// its own box; without that box the check reports it cut off.
func TestWideTableScrolls(t *testing.T) {
	dir := t.TempDir()
	xs := make([]float64, 96*96)
	for i := range xs {
		xs[i] = -123456.789012 * float64(i+1)
	}
	x := core.MustFromSlice(xs, 96, 96)
	nb := pageOf(t, dir, "wide", x, func(h string) string { return h })
	problems, err := check(chromium(t), nb, dir)
	require.NoError(t, err)
	assert.Empty(t, problems)

	nb = pageOf(t, dir, "cut", x, func(h string) string {
		require.Contains(t, h, "overflow-x:auto")
		return strings.ReplaceAll(h, "overflow-x:auto", "")
	})
	problems, err = check(chromium(t), nb, dir)
	require.NoError(t, err)
	assert.Contains(t, strings.Join(problems, "\n"), "1 tables cut off at the page's right edge")
}
