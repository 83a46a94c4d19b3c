package tensorio

import (
	"fmt"
	"os"
	"path/filepath"
)

// ReplaceFile writes the file called name through write, into a new file beside it that is
// renamed over name only once write has succeeded and the file is closed: a failure leaves
// name as it was (and removes the new file), and a reader that has name open or memory-mapped
// keeps the old contents instead of seeing them truncated under it. The file is made with mode
// 0644. Errors of write are returned as they are; the others are prefixed with pkg.
func ReplaceFile(pkg, name string, write func(f *os.File) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	return nil
}
