package workload

import (
	"fmt"
	"strings"
	"time"
)

// ViolationKind classifies what Verify found wrong.
type ViolationKind uint8

const (
	// Torn: the block holds a write of the history, but not the one the prefix
	// the other blocks hold implies -- a later write, or an older one while a
	// later write to it is missing: the state is after no prefix of the writes.
	Torn ViolationKind = iota + 1
	// UnknownWrite: a well-formed block of this volume holding a write the
	// current history does not have: discarded by a Resume (lost in a fail-over,
	// or the old site's diverged tail), never issued, or other content than
	// that write put there.
	UnknownWrite
	// Foreign: not zero and not a block of this volume at this address: no
	// header, another workload's or volume's block, or a misdirected write.
	Foreign
	// Checksum: a workload header whose checksum fails (a flipped bit, a torn
	// sector).
	Checksum
	// Unreadable: the device refused the read, or there is no device.
	Unreadable
	// TransactionLost: a transaction committed in the prefix that recovery
	// (checkpointed pages plus the redo log) does not bring back.
	TransactionLost
	// UncommittedData: recovery brings back a transaction the prefix does not
	// commit (a data page written before its log, say).
	UncommittedData
	// FileIncomplete: a file the uploads directory names lacks one of its data
	// blocks, or holds another write there.
	FileIncomplete
	// DanglingRef: a ref, or an object reachable from one, leads to an object
	// that is missing, incomplete or fails its content hash.
	DanglingRef
	// Malformed: an application structure that does not parse.
	Malformed
	// NotKept: a kept copy (the old primary's diverged tail, CheckKept)
	// lacks an acknowledged write: its block holds an older write, zeros,
	// or what no write explains.
	NotKept
)

func (k ViolationKind) String() string {
	switch k {
	case Torn:
		return "torn"
	case UnknownWrite:
		return "unknown-write"
	case Foreign:
		return "foreign"
	case Checksum:
		return "checksum"
	case Unreadable:
		return "unreadable"
	case TransactionLost:
		return "transaction-lost"
	case UncommittedData:
		return "uncommitted-data"
	case FileIncomplete:
		return "file-incomplete"
	case DanglingRef:
		return "dangling-ref"
	case Malformed:
		return "malformed"
	case NotKept:
		return "not-kept"
	}
	return fmt.Sprintf("ViolationKind(%d)", uint8(k))
}

// Violation is one thing Verify found wrong, with where and what.
type Violation struct {
	Volume   string
	Block    uint64 // the block holding the evidence
	Kind     ViolationKind
	Expected string
	Found    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s block %d [%s]: expected %s; found %s", v.Volume, v.Block, v.Kind, v.Expected, v.Found)
}

// maxViolationsPerVolume bounds a verdict: past it violations are counted.
const maxViolationsPerVolume = 32

// Prefix is the point of a volume's history its device holds.
type Prefix struct {
	Seq    uint64    // sequence number of the last write in the prefix; 0: the empty prefix
	Writes int       // current-history writes in the prefix
	At     time.Time // when that last write was issued; zero for the empty prefix
}

// LostWrites are the current-history writes after the prefix.
type LostWrites struct {
	Acknowledged      int
	AcknowledgedBytes uint64
	// Oldest is when the oldest lost acknowledged write was acknowledged, and
	// Age its age at the verdict's time: the loss age. It grows with
	// everything between the failure and the read-back (the isolation, the
	// fail-over, the start on the new site), so it is not the RPO; that is
	// VolumeVerdict.RPO, measured from the failure.
	Oldest         time.Time
	Age            time.Duration
	Unacknowledged int // writes whose Sync failed or never came; losing them is allowed
}

// VolumeVerdict is what Verify found on one volume.
type VolumeVerdict struct {
	Volume string
	Prefix Prefix
	Lost   LostWrites
	// BytesWritten are the bytes of every write the model ever issued to the
	// volume, across fail-overs.
	BytesWritten uint64
	Violations   []Violation // crash consistency in block order, then the application's; at most maxViolationsPerVolume
	Suppressed   int         // violations beyond the bound

	cut        int // index into the history: writes before it are in the prefix
	historyLen int // the history's length when verified, to refuse a stale Resume
	resumes    uint16
	recovered  any // the application state recovery found, for Resume
}

// Consistent reports whether the volume's device holds a prefix of the history
// that the application can recover from.
func (v VolumeVerdict) Consistent() bool { return len(v.Violations) == 0 && v.Suppressed == 0 }

// RecoveryPoint is the latest moment whose state the device holds as far
// as acknowledged writes go: when the oldest lost acknowledged write was
// acknowledged (Lost.Oldest; the models issue and acknowledge a write at one
// time). The device holds every acknowledged write before it. Not the newest write it holds (Prefix.At): a volume idle before its
// last snapshot holds that write, yet its data is as of the snapshot, so
// the prefix's end would count the idle span as lost. ok is false when no
// acknowledged write was lost: the device then holds all of them.
func (v VolumeVerdict) RecoveryPoint() (point time.Time, ok bool) {
	if v.Lost.Acknowledged == 0 {
		return time.Time{}, false
	}
	if v.Lost.Oldest.IsZero() {
		panic(fmt.Sprintf("workload: volume %s lost %d acknowledged writes without a time", v.Volume, v.Lost.Acknowledged))
	}
	return v.Lost.Oldest, true
}

// RPO is the recovery point the move achieved, as a DR engineer reads it:
// the time from the failure (the cut, or the fault that triggered the
// unplanned move) back to the recovery point the surviving copy holds
// (RecoveryPoint) -- the span of acknowledged writes before the failure
// that the move gave up. Zero when no acknowledged write was lost, or only
// writes issued at or after the failure (the old site's, cut off). Unlike
// Lost.Age it does not grow with the fail-over or the read-back.
func (v VolumeVerdict) RPO(failure time.Time) time.Duration {
	point, ok := v.RecoveryPoint()
	if !ok || !point.Before(failure) {
		return 0
	}
	return failure.Sub(point)
}

// Verdict is what Verify found on a workload's devices.
type Verdict struct {
	Workload string
	At       time.Time
	Volumes  []VolumeVerdict // in the order of Workload.Volumes

	owner *base
}

// Consistent reports whether every volume is consistent.
func (v Verdict) Consistent() bool {
	for _, volume := range v.Volumes {
		if !volume.Consistent() {
			return false
		}
	}
	return true
}

// Violations lists every volume's violations, volume by volume.
func (v Verdict) Violations() []Violation {
	var all []Violation
	for _, volume := range v.Volumes {
		all = append(all, volume.Violations...)
	}
	return all
}

// LostAcknowledged is the number of acknowledged writes lost on all volumes.
func (v Verdict) LostAcknowledged() int {
	lost := 0
	for _, volume := range v.Volumes {
		lost += volume.Lost.Acknowledged
	}
	return lost
}

// Volume returns one volume's verdict.
func (v Verdict) Volume(name string) (VolumeVerdict, bool) {
	for _, volume := range v.Volumes {
		if volume.Volume == name {
			return volume, true
		}
	}
	return VolumeVerdict{}, false
}

// String is a report of the verdict, one line per volume and per violation.
func (v Verdict) String() string {
	var b strings.Builder
	state := "consistent"
	if !v.Consistent() {
		state = "VIOLATED"
	}
	fmt.Fprintf(&b, "%s at %s: %s\n", v.Workload, v.At.UTC().Format(time.RFC3339Nano), state)
	for _, volume := range v.Volumes {
		fmt.Fprintf(&b, "  %s: prefix write #%d (%d writes); lost %d acknowledged (%d bytes, loss age %s), %d unacknowledged; %d bytes written\n",
			volume.Volume, volume.Prefix.Seq, volume.Prefix.Writes, volume.Lost.Acknowledged,
			volume.Lost.AcknowledgedBytes, volume.Lost.Age, volume.Lost.Unacknowledged, volume.BytesWritten)
		for _, violation := range volume.Violations {
			fmt.Fprintf(&b, "    %s\n", violation)
		}
		if volume.Suppressed > 0 {
			fmt.Fprintf(&b, "    ... and %d more violations\n", volume.Suppressed)
		}
	}
	return b.String()
}

// reporter collects one volume's violations up to the bound.
type reporter struct {
	volume     string
	violations []Violation
	suppressed int
}

func (r *reporter) add(kind ViolationKind, block uint64, expected, found string) {
	if len(r.violations) >= maxViolationsPerVolume {
		r.suppressed++
		return
	}
	r.violations = append(r.violations, Violation{Volume: r.volume, Block: block, Kind: kind, Expected: expected, Found: found})
}
