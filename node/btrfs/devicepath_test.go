package btrfs

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// TestDevicePathIsTheOpenVolumesLoopDevice: while a Device is open, DevicePath
// names a loop device that shows the volume's bytes to anyone who opens it
// (the CSI node plugin stages it); after the last Close it is ErrNotFound.
func TestDevicePathIsTheOpenVolumesLoopDevice(t *testing.T) {
	p := newTestPool(t)
	must(t, p.CreateVolume("v", 8*mib, backend.Thin), "CreateVolume")
	if _, err := p.DevicePath("v"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("DevicePath of a volume nobody opened: %v, want ErrNotFound", err)
	}
	dev, err := p.Open("v")
	must(t, err, "Open")
	path, err := p.DevicePath("v")
	must(t, err, "DevicePath")
	data := pooltest.Pattern(7, mib)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err, "opening "+path)
	if _, err := f.WriteAt(data, mib); err != nil {
		t.Fatal(err)
	}
	must(t, f.Sync(), "fsync "+path)
	must(t, f.Close(), "close "+path)
	got := make([]byte, mib)
	if _, err := dev.ReadAt(got, mib); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the pool's Device does not read what %s took (%v)", path, err)
	}
	must(t, dev.Close(), "Close")
	if _, err := p.DevicePath("v"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("DevicePath after the last Close: %v, want ErrNotFound", err)
	}
	if leaked := loopDevicesUnder(t, p.layout.dir+"/mnt"); len(leaked) > 0 {
		t.Fatalf("the volume's loop device outlived its last Close: %v", leaked)
	}
	if _, err := p.DevicePath("nope"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("DevicePath of no volume: %v, want ErrNotFound", err)
	}
}
