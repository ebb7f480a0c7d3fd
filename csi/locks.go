package csi

import (
	"fmt"
	"sync"
)

// Locks keeps one operation per volume at a time. TryAcquire never waits:
// the CO retries an RPC answered Aborted, as ceph-csi's volume locks expect.
type Locks struct {
	mu   sync.Mutex
	held map[string]bool
}

// TryAcquire takes id's lock, or answers ErrBusy.
func (l *Locks) TryAcquire(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[id] {
		return fmt.Errorf("%w: %s", ErrBusy, id)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[id] = true
	return nil
}

// Lock takes id's lock, or answers ErrBusy, and returns the function that
// gives it back.
func (l *Locks) Lock(id string) (release func(), err error) {
	if err := l.TryAcquire(id); err != nil {
		return nil, err
	}
	return func() { l.Release(id) }, nil
}

// Release gives id's lock back.
func (l *Locks) Release(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held[id] {
		panic(fmt.Sprintf("csi: releasing lock %q that is not held", id))
	}
	delete(l.held, id)
}
