package zfs

// Op names a kind of pool or device operation, for fault injection.
type Op uint8

const (
	// OpCreate is CreateVolume.
	OpCreate Op = iota
	// OpResize is ResizeVolume.
	OpResize
	// OpDestroy is DestroyVolume.
	OpDestroy
	// OpSetReadOnly is SetReadOnly.
	OpSetReadOnly
	// OpSnapshot is Snapshot.
	OpSnapshot
	// OpDestroySnapshot is DestroySnapshot.
	OpDestroySnapshot
	// OpClone is Clone.
	OpClone
	// OpRollback is Rollback.
	OpRollback
	// OpSend is Send.
	OpSend
	// OpReceive is Receive.
	OpReceive
	// OpList covers the queries: Volume, Volumes, Snapshots, Usage.
	OpList
	// OpOpen is Open.
	OpOpen
	// OpRead is Device.ReadAt.
	OpRead
	// OpWrite is Device.WriteAt.
	OpWrite
	// OpSync is Device.Sync, and the flush of a last Device.Close.
	OpSync
	opCount
)

func (o Op) String() string {
	names := [...]string{"create", "resize", "destroy", "set-readonly", "snapshot",
		"destroy-snapshot", "clone", "rollback", "send", "receive", "list", "open",
		"read", "write", "sync"}
	if o < opCount {
		return names[o]
	}
	return "Op(?)"
}

// FaultFunc decides whether an operation fails: it sees the operation and its
// target (a volume name, "volume@snapshot", or "" for pool-wide queries) and
// returns the error to report, or nil to let the operation run.
type FaultFunc func(op Op, target string) error

type faults struct {
	queued [opCount][]error
	fn     FaultFunc
}

// FailNext makes the next call of op fail with err, after any failures already
// queued for it. The failing call changes nothing.
func (p *Pool) FailNext(op Op, err error) {
	if op >= opCount || err == nil {
		panic("zfs: FailNext takes a known operation and an error")
	}
	p.faults.queued[op] = append(p.faults.queued[op], err)
}

// SetFaults installs a function consulted on every operation after the queued
// failures; nil removes it.
func (p *Pool) SetFaults(fn FaultFunc) { p.faults.fn = fn }

// fault returns the injected failure of an operation, if any.
func (p *Pool) fault(op Op, target string) error {
	if q := p.faults.queued[op]; len(q) > 0 {
		err := q[0]
		p.faults.queued[op] = q[1:]
		return err
	}
	if p.faults.fn != nil {
		return p.faults.fn(op, target)
	}
	return nil
}
