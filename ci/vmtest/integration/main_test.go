package integration

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// guests are the run's nodes; nil outside `make vmtest`, where every test skips.
var guests *Guests

func TestMain(m *testing.M) {
	var err error
	guests, err = Connect()
	if err != nil && !errors.Is(err, ErrNotInGuest) {
		fmt.Fprintln(os.Stderr, "integration: connecting the guests:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func needGuests(t *testing.T) *Guests {
	t.Helper()
	if guests == nil {
		t.Skip(ErrNotInGuest)
	}
	return guests
}
