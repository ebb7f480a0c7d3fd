package zfs

import (
	"fmt"
	"io"

	"github.com/baton-dr/baton/storage/backend"
)

// streamSource is where Receive reads a stream from: the decoder for bytes
// from anywhere, or the sim's own unread *Stream, whose blocks need no
// encoding when sender and receiver are both simulated.
type streamSource interface {
	header() (streamHeader, error)
	body(streamHeader) ([]record, error)
}

type directSource struct{ s *Stream }

func (d directSource) header() (streamHeader, error)       { return d.s.header, nil }
func (d directSource) body(streamHeader) ([]record, error) { return d.s.records, nil }

func sourceOf(r io.Reader) streamSource {
	if s, ok := r.(*Stream); ok && s.unread() {
		s.consume()
		return directSource{s}
	}
	return newDecoder(r)
}

// receivePlan is what the checks of a stream against the pool decided.
type receivePlan struct {
	context string    // how zfs words a refusal of this kind of stream
	target  *volume   // the volume an incremental stream extends
	origin  *snapshot // the snapshot a clone stream is cloned from
}

// Receive applies a stream to a volume, all or nothing: the stream is read
// and checked whole, and the space found, before anything changes.
func (p *Pool) Receive(volumeName string, r io.Reader) error {
	if err := p.fault(OpReceive, volumeName); err != nil {
		return err
	}
	if why, ok := p.checkName(volumeName, p.datasetPath(volumeName)); !ok {
		return backend.Refusal(backend.ErrInvalid, tool, "cannot receive: %s", why)
	}
	if r == nil {
		return backend.Refusal(backend.ErrInvalid, tool, "cannot receive: failed to read from stream")
	}
	source := sourceOf(r)
	h, err := source.header()
	if err != nil {
		return backend.Refusal(backend.ErrInvalid, tool, "cannot receive: %v", err)
	}
	plan, err := p.planReceive(volumeName, h)
	if err != nil {
		return err
	}
	records, err := source.body(h)
	if err != nil {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: %v", plan.context, err)
	}
	return p.applyReceive(volumeName, h, plan, records)
}

// planReceive checks a stream's header against the pool in the order libzfs
// and the DMU check it, so a stream that breaks two rules is refused for the
// same one as on a machine.
func (p *Pool) planReceive(name string, h streamHeader) (receivePlan, error) {
	destination := p.snapshotPath(name, h.snapshot)
	var plan receivePlan
	if h.clone {
		if plan.origin = p.snapshotByGUID(h.baseGUID); plan.origin == nil {
			return plan, backend.Refusal(backend.ErrNoBase, tool, "cannot receive: local origin for clone %s does not exist", destination)
		}
	}
	newVolume := !h.incremental() || h.clone
	plan.context = "cannot receive incremental stream"
	if newVolume {
		plan.context = "cannot receive new filesystem stream"
	}
	if len(destination) > maxNameBytes {
		return plan, backend.Refusal(backend.ErrInvalid, tool, "%s: name is too long", plan.context)
	}
	v, exists := p.volumes[name]
	switch {
	case exists && newVolume:
		return plan, backend.Refusal(backend.ErrExists, tool, "%s: destination '%s' exists", plan.context, p.datasetPath(name))
	case !exists && !newVolume:
		return plan, backend.Refusal(backend.ErrNoBase, tool, "%s: destination '%s' does not exist", plan.context, p.datasetPath(name))
	case !exists:
		return plan, p.checkStreamFits(plan, h, plan.origin)
	}
	plan.target = v
	// zfs 2.1 refuses a snapshot the volume holds, even the very one the
	// stream carries (same GUID): only replication (-R) streams skip those.
	if v.findSnapshot(h.snapshot) != nil {
		return plan, backend.Refusal(backend.ErrExists, tool, "cannot restore to %s: destination already exists", destination)
	}
	return plan, p.checkIncremental(plan, v, h)
}

// checkIncremental is the DMU's check of an incremental stream: the base must
// be a snapshot of the volume, and the volume unmodified since.
func (p *Pool) checkIncremental(plan receivePlan, v *volume, h streamHeader) error {
	var base *snapshot
	for _, s := range v.snapshots {
		if s.guid == h.baseGUID {
			base = s
		}
	}
	if base == nil {
		return backend.Refusal(backend.ErrNoBase, tool, "%s: most recent snapshot of %s does not match incremental source",
			plan.context, p.datasetPath(v.name))
	}
	if v.modifiedTxg > base.createTxg {
		return backend.Refusal(backend.ErrDiverged, tool, "%s: destination %s has been modified since most recent snapshot",
			plan.context, p.datasetPath(v.name))
	}
	return p.checkStreamFits(plan, h, v.latest())
}

// checkStreamFits refuses a stream whose block size or volume size the
// volume it lands on cannot take (base nil: a full stream's new volume).
func (p *Pool) checkStreamFits(plan receivePlan, h streamHeader, base *snapshot) error {
	if base == nil {
		return nil
	}
	if h.blockSizeBytes != base.volume.blockSizeBytes {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: stream block size %d does not match volume block size %d",
			plan.context, h.blockSizeBytes, base.volume.blockSizeBytes)
	}
	if h.volumeSizeBytes < base.sizeBytes {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: stream volume size %d is below the destination's %d",
			plan.context, h.volumeSizeBytes, base.sizeBytes)
	}
	return nil
}

// applyReceive finds the space and then writes the stream's blocks into a new
// volume, a new clone, or the target's head, and snapshots the result.
func (p *Pool) applyReceive(name string, h streamHeader, plan receivePlan, records []record) error {
	v := plan.target
	var addLiveBytes uint64
	next := charge{}
	for _, rec := range records {
		if v == nil || !exclusive(v.head, rec.index) {
			addLiveBytes += h.blockSizeBytes
		}
	}
	if v != nil {
		next = v.charge()
		next.uniqueBytes = 0
		next.pendingExtraBytes = uint64(len(v.pending)) * v.blockSizeBytes
		if v.provisioning == backend.Thick {
			next.reservationBytes = h.volumeSizeBytes
		}
	}
	if !p.fits(addLiveBytes, v, next) {
		return outOfSpace(plan.context)
	}
	expected := p.allocatedBytes() + addLiveBytes + next.bytes()
	switch {
	case plan.origin != nil:
		v = p.cloneSnapshot(plan.origin, name)
	case v == nil:
		v = &volume{name: name, blockSizeBytes: h.blockSizeBytes, provisioning: backend.Thin, pending: map[uint64]*block{}}
		p.volumes[name] = v
	default:
		expected -= v.charge().bytes()
	}
	for _, rec := range records {
		if !p.setBlock(&v.head, rec.index, &block{data: rec.data}) {
			v.uniqueBytes += h.blockSizeBytes
		}
	}
	v.sizeBytes = h.volumeSizeBytes
	v.modifiedTxg = p.nextTxg()
	p.takeSnapshot(v, h.snapshot, h.snapshotGUID)
	if got := p.allocatedBytes(); got != expected {
		panic(fmt.Sprintf("zfs: a receive allocated %d bytes, its check %d", got, expected))
	}
	return nil
}
