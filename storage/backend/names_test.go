package backend

import "testing"

func TestIsNameCharTakesZFSComponentCharactersOnly(t *testing.T) {
	for _, c := range []byte("azAZ09-_.: ") {
		if !IsNameChar(c) {
			t.Errorf("%q refused", c)
		}
	}
	for _, c := range []byte("@#/%\\\x00\xff") {
		if IsNameChar(c) {
			t.Errorf("%q taken", c)
		}
	}
}
