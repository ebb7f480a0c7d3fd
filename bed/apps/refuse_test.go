package apps

import (
	"strings"
	"testing"
)

func TestMoveRefused(t *testing.T) {
	for _, c := range []struct {
		from, to string
		planned  bool
		refused  string
	}{
		{"a", "b", true, ""},
		{"a", "b", false, ""},
		{"", "b", false, ""}, // a fail-over from nothing: the site went down with it
		{"", "b", true, "relocate wp: it is not running"},
		{"a", "a", true, "relocate wp: it runs on a already"},
		{"a", "a", false, "fail over wp: it runs on a already"},
	} {
		move := "fail over"
		if c.planned {
			move = "relocate"
		}
		err := MoveRefused(move, "wp", c.from, c.to, c.planned)
		switch {
		case err == nil && c.refused != "":
			t.Errorf("%+v: not refused, want %q", c, c.refused)
		case err != nil && (c.refused == "" || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%+v: refused: %v", c, err)
		}
	}
}
