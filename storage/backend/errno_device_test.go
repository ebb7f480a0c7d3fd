package backend

import (
	"errors"
	"io"
	"testing"
)

// failingDevice fails every call with err (a test double of an open device).
type failingDevice struct{ err error }

func (d failingDevice) ReadAt([]byte, int64) (int, error)  { return 0, d.err }
func (d failingDevice) WriteAt([]byte, int64) (int, error) { return 0, d.err }
func (d failingDevice) Sync() error                        { return d.err }
func (d failingDevice) Close() error                       { return d.err }

func TestErrnoDeviceClassifiesEveryErrorButAReadsEOF(t *testing.T) {
	errno := errors.New("errno")
	classify := func(err error, path string) error {
		if errors.Is(err, errno) {
			return Refusal(ErrRefused, "test", "%s: %v", path, err)
		}
		return err
	}
	d := &ErrnoDevice{Device: failingDevice{errno}, Path: "/dev/x", Classify: classify}
	_, readErr := d.ReadAt(nil, 0)
	_, writeErr := d.WriteAt(nil, 0)
	for name, err := range map[string]error{"read": readErr, "write": writeErr, "sync": d.Sync(), "close": d.Close()} {
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want ErrRefused", name, err)
		}
	}
	d.Device = failingDevice{io.EOF}
	if _, err := d.ReadAt(nil, 0); err != io.EOF {
		t.Errorf("a read at the end gave %v, want io.EOF itself", err)
	}
}
