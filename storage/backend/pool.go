package backend

import "io"

// Provisioning says whether a volume reserves its size when it is created.
type Provisioning uint8

const (
	// Thin volumes reserve nothing; writes take space as they come.
	Thin Provisioning = iota
	// Thick volumes reserve their full size up front (ZFS refreservation).
	Thick
)

func (p Provisioning) String() string {
	switch p {
	case Thin:
		return "thin"
	case Thick:
		return "thick"
	}
	return "Provisioning(?)"
}

// VolumeInfo describes one volume of a pool.
type VolumeInfo struct {
	Name         string
	SizeBytes    uint64 // the size a consumer sees
	UsedBytes    uint64 // bytes written and referenced by this volume alone
	Provisioning Provisioning
	// Origin is "volume@snapshot" for a clone, empty otherwise.
	Origin   string
	ReadOnly bool
}

// SnapshotInfo describes one snapshot of a volume.
type SnapshotInfo struct {
	Volume string
	Name   string
	// GUID identifies the snapshot's content across pools: send and receive
	// preserve it (ZFS guid; btrfs received_uuid), so two pools holding a
	// snapshot with the same GUID hold the same bytes. An incremental stream
	// names its base by GUID.
	GUID string
	// CreateTxg orders the snapshots of one volume, oldest first.
	CreateTxg uint64
	// UsedBytes are the bytes only this snapshot holds.
	UsedBytes uint64
}

// Usage is a pool's space accounting.
type Usage struct {
	SizeBytes      uint64 // the pool's capacity
	AllocatedBytes uint64 // written data plus reservations of thick volumes
	FreeBytes      uint64 // SizeBytes - AllocatedBytes
}

// Device is a volume opened for block I/O. Writes are durable once Sync returns;
// a crash loses writes that were not synced.
type Device interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
	Close() error
}

// Pool is one node's storage pool. Names are plain volume names ("pvc-1"), not
// paths; an implementation maps them onto its own layout. Every method is safe to
// retry: it refuses with ErrExists or ErrNotFound rather than half-applying.
type Pool interface {
	// CreateVolume creates an empty (zero-filled) volume.
	CreateVolume(name string, sizeBytes uint64, provisioning Provisioning) error
	// ResizeVolume grows a volume; shrinking is ErrInvalid.
	ResizeVolume(name string, sizeBytes uint64) error
	// DestroyVolume destroys a volume and its snapshots. A volume whose snapshots
	// have dependent clones is ErrBusy, as is one with an open device.
	DestroyVolume(name string) error
	// SetReadOnly fences a volume (or lifts the fence); a read-only device refuses
	// writes (ErrRefused), devices already open included. Receives still apply.
	SetReadOnly(name string, readOnly bool) error

	// Snapshot records the volume's current (synced) content under a name.
	Snapshot(volume, snapshot string) error
	// DestroySnapshot destroys a snapshot; one with dependent clones is ErrBusy.
	DestroySnapshot(volume, snapshot string) error
	// Clone creates a writable volume whose content starts as the snapshot's.
	Clone(volume, snapshot, target string) error
	// Rollback discards what the volume gained after its latest snapshot, which
	// must be the named one: rolling back past a later snapshot is ErrBusy.
	Rollback(volume, snapshot string) error

	// Send streams a snapshot: the whole of it when base is empty, otherwise the
	// blocks that changed since base. The base is a snapshot of the same volume
	// or, for a clone, its origin snapshot (named "volume@snapshot").
	Send(volume, base, snapshot string) (io.ReadCloser, error)
	// Receive applies a stream to volume, all or nothing (a broken stream is
	// ErrInvalid). A full stream creates the volume and refuses an existing one
	// (ErrExists). An incremental stream needs its base among the volume's
	// snapshots, normally the latest, and no writes since (ErrDiverged); a
	// volume without the base, or no volume, is ErrNoBase. A clone stream into a
	// missing volume creates it as a clone of the pool's snapshot with the
	// base's GUID (ErrNoBase without one); into an existing volume it is
	// ErrExists. Receiving a snapshot the volume already holds (same GUID)
	// changes nothing: zfs refuses it (ErrExists), another tool may succeed.
	Receive(volume string, stream io.Reader) error

	// Volume describes one volume; Volumes all of them, sorted by name.
	Volume(name string) (VolumeInfo, error)
	Volumes() ([]VolumeInfo, error)
	// Snapshots lists a volume's snapshots, oldest first.
	Snapshots(volume string) ([]SnapshotInfo, error)
	// Usage reports the pool's space.
	Usage() (Usage, error)

	// Open opens a volume for block I/O.
	Open(volume string) (Device, error)
}

// SnapshotLister is implemented by pools that list every volume's snapshots
// in one reading, where a listing of one volume's reads the whole pool anyway
// (btrfs lists every subvolume of the filesystem). The node agent reports
// all of them every pass: one reading instead of one per volume.
type SnapshotLister interface {
	// AllSnapshots lists every volume's snapshots, each volume's oldest
	// first, as Snapshots lists them. A volume without snapshots may be
	// absent.
	AllSnapshots() (map[string][]SnapshotInfo, error)
}
