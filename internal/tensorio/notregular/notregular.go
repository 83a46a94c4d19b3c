// Package notregular makes, for tests, paths that are not regular files (a named pipe nobody
// writes to, a directory, a character device), and runs an opener on them with a deadline, so
// that every file-format package checks that it refuses them without hanging.
package notregular

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Deadline is how long Within lets an opener run before it fails the test as blocked.
const Deadline = 5 * time.Second

// Paths returns paths that are not regular files, keyed by the words tensorio.FileKind uses for
// them ("a named pipe (FIFO)", "a directory", "a character device"), and the named pipe's path
// (empty where the system has no named pipes; the pipe is then left out of paths). name is the
// pipe's file name, so that a format guessed from the extension sees the one it tests.
func Paths(t testing.TB, name string) (paths map[string]string, fifo string) {
	t.Helper()
	dir := t.TempDir()
	paths = map[string]string{"a directory": dir}
	if _, err := os.Stat(os.DevNull); err == nil && os.DevNull != "NUL" {
		paths["a character device"] = os.DevNull
	}
	fifo = filepath.Join(dir, name)
	if mkfifo(fifo) == nil {
		paths["a named pipe (FIFO)"] = fifo
	} else {
		fifo = ""
	}
	return paths, fifo
}

// Within runs open, and fails the test if open has not returned after Deadline (it is blocked
// opening the named pipe fifo): then it opens the pipe for writing, over and over, which lets open
// go on and return, so that a failing test ends instead of hanging the run.
func Within(t testing.TB, fifo string, open func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- open() }()
	select {
	case err := <-done:
		return err
	case <-time.After(Deadline):
	}
	for { // each open for writing lets a reader blocked opening the pipe go on
		select {
		case <-done:
			t.Fatalf("the opener blocked on a named pipe for over %v", Deadline)
			return nil
		case <-time.After(10 * time.Millisecond):
			if fifo == "" {
				continue
			}
			if w, err := os.OpenFile(fifo, os.O_WRONLY|writeNonblock, 0); err == nil {
				w.Close()
			}
		}
	}
}
