package placement

import "fmt"

// assertf panics when a programmer error broke an invariant. Operating errors
// (exhausted ranges, refusals) are returned, never asserted.
func assertf(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf("placement: broken invariant: "+format, args...))
	}
}
