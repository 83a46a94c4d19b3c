package flightx

import (
	"fmt"
	"strings"
)

// wrapf adds context to err: after it when err already names this package ("flightx: batch of
// 3 elements when 2 remain (get "w")"), so that the message leads with the cause and says
// "flightx:" once, and before it otherwise ("flightx: put "w": core: ..."). An empty format adds
// only the package's name, where err lacks it.
func wrapf(err error, format string, args ...any) error {
	named := strings.HasPrefix(err.Error(), "flightx: ")
	switch {
	case format == "" && named:
		return err
	case format == "":
		return fmt.Errorf("flightx: %w", err)
	case named:
		return fmt.Errorf("%w (%s)", err, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("flightx: %s: %w", fmt.Sprintf(format, args...), err)
}
