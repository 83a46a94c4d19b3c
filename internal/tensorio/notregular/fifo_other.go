//go:build !unix

package notregular

import "errors"

const writeNonblock = 0

func mkfifo(string) error { return errors.New("no named pipes on this system") }
