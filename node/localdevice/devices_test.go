package localdevice

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// The zero Devices reaches this machine: its OpenDevice opens the path here.
func TestUnsetDevicesOpenOnThisMachine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "device")
	if err := os.WriteFile(path, []byte("block"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := Devices{}.OrThisMachine()
	if d.FenceDevice == nil {
		t.Fatal("an unset FenceDevice stays unset")
	}
	f, err := d.OpenDevice(path, false)
	if err != nil {
		t.Fatalf("opening a file on this machine: %v", err)
	}
	defer f.Close()
	buf := make([]byte, 5)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "block" {
		t.Fatalf("read %q, %v; want the file's bytes", buf, err)
	}
}

// What a caller set -- a guest's devices, reached through its guestd -- is
// kept: nothing falls back to this machine's device of the same path.
func TestSetDevicesAreKept(t *testing.T) {
	errGuest := errors.New("the guest's")
	var fenced []string
	d := Devices{
		OpenDevice:  func(string, bool) (backend.Device, error) { return nil, errGuest },
		FenceDevice: func(path string, _ bool) error { fenced = append(fenced, path); return nil },
	}.OrThisMachine()
	if _, err := d.OpenDevice("/dev/zd0", true); !errors.Is(err, errGuest) {
		t.Errorf("OpenDevice gave %v, not the caller's", err)
	}
	if err := d.FenceDevice("/dev/zd0", true); err != nil || len(fenced) != 1 {
		t.Errorf("FenceDevice gave %v and fenced %v, not through the caller's", err, fenced)
	}
}
