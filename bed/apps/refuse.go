package apps

import "fmt"

// MoveRefused says why the move of application name, running on from (""
// while it is stopped), to site to may not start, or nil. A planned move
// needs the application running: it hands over what the application wrote;
// an unplanned one takes over from wherever it last ran, or from nothing.
// Neither may target the site it runs on: a fail-over there would make the
// primary's own chain end a tail of itself. Every bed's moves ask it before
// they touch anything.
func MoveRefused(move, name, from, to string, planned bool) error {
	switch {
	case planned && from == "":
		return fmt.Errorf("%s %s: it is not running", move, name)
	case from == to:
		return fmt.Errorf("%s %s: it runs on %s already", move, name, to)
	}
	return nil
}
