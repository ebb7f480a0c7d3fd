package workload

import (
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/workload/workloadtest"
)

// crashingDevice crashes its whole site when the site's n-th write is issued:
// that write and everything since each device's last Sync are lost, as when
// the node loses power.
type crashingDevice struct {
	*workloadtest.Device
	site       site
	writesLeft *int
}

func (c crashingDevice) WriteAt(p []byte, off int64) (int, error) {
	*c.writesLeft--
	if *c.writesLeft == 0 {
		for _, dev := range c.site {
			dev.Crash()
		}
	}
	return c.Device.WriteAt(p, off)
}

// TestCrashAtAnyWriteLosesNoAcknowledgedWrite: wherever the node crashes --
// inside a transaction, between a checkpoint's pages and its pointer, between
// a file's data and its entry, between a push's objects and its ref -- the
// restarted devices hold a prefix with every acknowledged write, and the
// workload resumes from it.
func TestCrashAtAnyWriteLosesNoAcknowledgedWrite(t *testing.T) {
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			for crashAt := 1; crashAt < 400; crashAt += 7 {
				w := m.make(uint64(crashAt), smallLayouts()...)
				s := newSite(w)
				left := crashAt
				devices := Devices{}
				for name, dev := range s {
					devices[name] = crashingDevice{Device: dev, site: s, writesLeft: &left}
				}
				now := epoch
				var err error
				for ; err == nil; now = now.Add(stepInterval) {
					_, err = w.Step(now, devices)
				}
				if !errors.Is(err, workloadtest.ErrCrashed) {
					t.Fatalf("crash at write %d: %v", crashAt, err)
				}
				for _, dev := range s {
					dev.Restart()
				}
				v := w.Verify(s.devices(), now)
				requireConsistent(t, v)
				if v.LostAcknowledged() != 0 {
					t.Fatalf("crash at write %d lost %d acknowledged writes:\n%s", crashAt, v.LostAcknowledged(), v)
				}
				if err := w.Resume(v); err != nil {
					t.Fatal(err)
				}
				now = run(t, w, s, now, 15)
				requireConsistent(t, w.Verify(s.devices(), now))
			}
		})
	}
}

var _ backend.Device = crashingDevice{}
