// Command browsercheck loads executed notebooks, rendered to HTML by nbconvert, in headless
// Chromium and checks what a reader sees: every tensor the notebook displayed is in the page
// with its caption and its table, every picture is decoded at its size, no output shows markup
// as text, and a screenshot of each page is not blank. scripts/notebooks.sh runs it after the
// notebooks have run; CI keeps the screenshots (see examples/notebooks/README.md).
//
//	go run ./tools/notebooks/browsercheck -shots DIR executed/01-tensors.ipynb ...
//
// For each NAME.ipynb it expects NAME.html beside it (jupyter nbconvert --to html), writes
// DIR/NAME.png (the screenshot) and DIR/NAME.json (what the page reported), and exits 1 if any
// check fails. Chromium is Debian's /usr/bin/chromium (or $CHROMIUM), run headless as root
// needs it: without its sandbox, GPU, network services or first-run work, in a fresh profile.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// probe is added to the page: on load it writes what it finds into <pre id="dlpack-check">.
const probe = `<script>
window.addEventListener('load', function () {
  var r = {tensors: [], images: [], escaped: [], height: document.documentElement.scrollHeight};
  document.querySelectorAll('.dlpack-tensor').forEach(function (el) {
    var cap = el.querySelector('.dlpack-caption');
    var imgs = [];
    el.querySelectorAll('img').forEach(function (i) {
      imgs.push({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight});
    });
    // a table that reaches past the page's right edge is cut off unless a box around it scrolls
    var cut = 0, right = document.documentElement.clientWidth + 1;
    el.querySelectorAll('table').forEach(function (tb) {
      var box = null;
      for (var s = tb.parentElement; s && s !== document.body; s = s.parentElement) {
        var o = getComputedStyle(s).overflowX;
        if (o === 'auto' || o === 'scroll') { box = s; break; }
      }
      if (box ? box.getBoundingClientRect().right > right : tb.getBoundingClientRect().right > right) cut++;
    });
    r.tensors.push({caption: cap ? cap.textContent : null, tables: el.querySelectorAll('table').length,
      cells: el.querySelectorAll('td').length, cut: cut, images: imgs});
  });
  document.querySelectorAll('img').forEach(function (i) {
    if (!i.closest('.dlpack-tensor')) r.images.push({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight});
  });
  document.querySelectorAll('.jp-OutputArea-output, .output_area').forEach(function (el) {
    var t = el.textContent;
    if (/<\/?(div|table|thead|tbody|tr|td|th|img|p|code)\b/.test(t) || /&(lt|gt|amp|quot|#\d+);/.test(t)) r.escaped.push(t.slice(0, 200));
  });
  var pre = document.createElement('pre');
  pre.id = 'dlpack-check';
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
});
</script>
`

type report struct {
	Tensors []struct {
		Caption *string `json:"caption"`
		Tables  int     `json:"tables"`
		Cells   int     `json:"cells"`
		Cut     int     `json:"cut"` // tables past the page's right edge, in no box that scrolls
		Images  []img   `json:"images"`
	} `json:"tensors"`
	Images  []img    `json:"images"`
	Escaped []string `json:"escaped"`
	Height  int      `json:"height"`
}

type img struct {
	Complete      bool `json:"complete"`
	Width, Height int
}

// expected is what the executed notebook says the page must show.
type expected struct {
	tensors []tensorOut
	images  []image.Point // pictures shown on their own (image/png outputs), by size
}

type tensorOut struct {
	caption string
	tables  int
	images  []image.Point
}

var (
	captionRe = regexp.MustCompile(`<div class="dlpack-caption"[^>]*>([^<]*)</div>`)
	imgRe     = regexp.MustCompile(`src="data:image/png;base64,([^"]+)"`)
)

func main() {
	shots := flag.String("shots", "artifacts/notebooks", "folder for the screenshots and reports")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: browsercheck -shots DIR NOTEBOOK.ipynb...")
		os.Exit(2)
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if err := os.MkdirAll(*shots, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "browsercheck:", err)
		os.Exit(1)
	}
	failed := 0
	for _, nb := range flag.Args() {
		problems, err := check(chromium, nb, *shots)
		name := filepath.Base(nb)
		switch {
		case err != nil:
			failed++
			fmt.Printf("FAIL %s: %v\n", name, err)
		case len(problems) > 0:
			failed++
			fmt.Printf("FAIL %s\n", name)
			for _, p := range problems {
				fmt.Printf("    %s\n", p)
			}
		default:
			fmt.Printf("ok   %s in the browser\n", name)
		}
	}
	fmt.Printf("browser: %d checked, %d failed; screenshots in %s\n", flag.NArg(), failed, *shots)
	if failed > 0 {
		os.Exit(1)
	}
}

// check loads one rendered notebook and returns what is wrong with it.
func check(chromium, nbPath, shots string) ([]string, error) {
	want, err := expect(nbPath)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(filepath.Base(nbPath), ".ipynb")
	page, err := os.ReadFile(strings.TrimSuffix(nbPath, ".ipynb") + ".html")
	if err != nil {
		return nil, fmt.Errorf("the rendered page: %w", err)
	}
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		return nil, fmt.Errorf("the rendered page has no </body>")
	}
	probed := filepath.Join(shots, base+".probe.html")
	if err := os.WriteFile(probed, append(append(append([]byte{}, page[:i]...), probe...), page[i:]...), 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(probed)
	abs, err := filepath.Abs(probed)
	if err != nil {
		return nil, err
	}
	url := "file://" + abs

	dom, err := runChromium(chromium, "--dump-dom", "--window-size=1280,1000", url)
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?s)<pre id="dlpack-check">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		return nil, fmt.Errorf("the page did not run its check (no #dlpack-check in the DOM)")
	}
	var got report
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		return nil, fmt.Errorf("the page's report: %w", err)
	}
	if js, err := json.MarshalIndent(got, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(shots, base+".json"), js, 0o644)
	}

	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(got.Tensors) != len(want.tensors) {
		bad("%d tensors in the page, the notebook displayed %d", len(got.Tensors), len(want.tensors))
	}
	for k := 0; k < min(len(got.Tensors), len(want.tensors)); k++ {
		g, w := got.Tensors[k], want.tensors[k]
		switch {
		case g.Caption == nil:
			bad("tensor %d: no caption", k)
		case strings.TrimSpace(*g.Caption) != w.caption:
			bad("tensor %d: caption %q, want %q", k, *g.Caption, w.caption)
		}
		if g.Tables != w.tables {
			bad("tensor %d (%s): %d tables, want %d", k, w.caption, g.Tables, w.tables)
		}
		if w.tables > 0 && g.Cells == 0 {
			bad("tensor %d (%s): a table without cells", k, w.caption)
		}
		if g.Cut > 0 {
			bad("tensor %d (%s): %d tables cut off at the page's right edge (they should scroll)", k, w.caption, g.Cut)
		}
		problems = append(problems, compareImages(fmt.Sprintf("tensor %d (%s)", k, w.caption), g.Images, w.images)...)
	}
	problems = append(problems, compareImages("pictures outside tensors", got.Images, want.images)...)
	for _, e := range got.Escaped {
		bad("markup shown as text: %q", e)
	}

	// the screenshot: the whole page, which must not be blank
	height := min(max(got.Height, 600), 16000)
	shot := filepath.Join(shots, base+".png")
	if _, err := runChromium(chromium, "--screenshot="+shot, fmt.Sprintf("--window-size=1280,%d", height),
		"--hide-scrollbars", url); err != nil {
		return nil, err
	}
	problems = append(problems, checkScreenshot(shot, 1280, height)...)
	return problems, nil
}

func compareImages(what string, got []img, want []image.Point) []string {
	var problems []string
	if len(got) != len(want) {
		return []string{fmt.Sprintf("%s: %d pictures in the page, want %d", what, len(got), len(want))}
	}
	for i := range got {
		if !got[i].Complete || got[i].Width != want[i].X || got[i].Height != want[i].Y {
			problems = append(problems, fmt.Sprintf("%s: picture %d decoded at %d×%d (complete: %v), want %d×%d",
				what, i, got[i].Width, got[i].Height, got[i].Complete, want[i].X, want[i].Y))
		}
	}
	return problems
}

// checkScreenshot decodes the screenshot and checks its size and that it shows something: a
// blank page is one color.
func checkScreenshot(path string, w, h int) []string {
	f, err := os.Open(path)
	if err != nil {
		return []string{fmt.Sprintf("screenshot: %v", err)}
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		return []string{fmt.Sprintf("screenshot %s: %v", path, err)}
	}
	if b := im.Bounds(); b.Dx() != w || b.Dy() != h {
		return []string{fmt.Sprintf("screenshot %s is %d×%d, want %d×%d", path, b.Dx(), b.Dy(), w, h)}
	}
	colors := map[[3]uint32]bool{}
	dark := 0
	for y := 0; y < h; y += 3 {
		for x := 0; x < w; x += 3 {
			r, g, b, _ := im.At(x, y).RGBA()
			colors[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
			if r>>8 < 96 && g>>8 < 96 && b>>8 < 96 {
				dark++
			}
		}
	}
	if len(colors) < 8 || dark == 0 {
		return []string{fmt.Sprintf("screenshot %s looks blank (%d colors, %d dark samples)", path, len(colors), dark)}
	}
	return nil
}

// runChromium runs headless Chromium once, in a fresh profile, and returns its stdout.
func runChromium(chromium string, args ...string) ([]byte, error) {
	profile, err := os.MkdirTemp("", "browsercheck-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
		"--user-data-dir=" + profile, "--virtual-time-budget=10000"}, args...)
	cmd := exec.CommandContext(ctx, chromium, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", chromium, strings.Join(args, " "), err, tail(stderr.String(), 2000))
	}
	return stdout.Bytes(), nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// expect reads the executed notebook: the tensors and pictures its outputs hold, in order.
func expect(nbPath string) (expected, error) {
	var nb struct {
		Cells []struct {
			Outputs []struct {
				Type string                     `json:"output_type"`
				Data map[string]json.RawMessage `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	var e expected
	b, err := os.ReadFile(nbPath)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return e, fmt.Errorf("%s: %w", nbPath, err)
	}
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			if o.Type != "display_data" && o.Type != "execute_result" {
				continue
			}
			if raw, ok := o.Data["text/html"]; ok {
				h, err := text(raw)
				if err != nil {
					return e, err
				}
				if !strings.Contains(h, `class="dlpack-tensor"`) {
					continue
				}
				t := tensorOut{tables: strings.Count(h, "<table")}
				if m := captionRe.FindStringSubmatch(h); m != nil {
					t.caption = html.UnescapeString(m[1])
				}
				for _, m := range imgRe.FindAllStringSubmatch(h, -1) {
					p, err := pngSize(m[1])
					if err != nil {
						return e, err
					}
					t.images = append(t.images, p)
				}
				e.tensors = append(e.tensors, t)
				continue
			}
			if raw, ok := o.Data["image/png"]; ok {
				s, err := text(raw)
				if err != nil {
					return e, err
				}
				p, err := pngSize(s)
				if err != nil {
					return e, err
				}
				e.images = append(e.images, p)
			}
		}
	}
	return e, nil
}

// text reads a notebook string, which may be split into a list of lines.
func text(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return "", err
	}
	return strings.Join(lines, ""), nil
}

func pngSize(b64 string) (image.Point, error) {
	data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(b64), ""))
	if err != nil {
		return image.Point{}, fmt.Errorf("a PNG in the notebook: %w", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return image.Point{}, fmt.Errorf("a PNG in the notebook: %w", err)
	}
	return image.Point{cfg.Width, cfg.Height}, nil
}
