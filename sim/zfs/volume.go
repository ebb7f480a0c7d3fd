package zfs

import (
	"fmt"

	"github.com/baton-dr/baton/storage/backend"
)

// maxVolumeSizeBytes bounds a volume so that its block indexes fit the tree
// at the smallest block size and its offsets fit an int64.
const maxVolumeSizeBytes = uint64(1) << 62

// CreateVolume creates an empty volume of sizeBytes rounded up to the block
// size, as `zfs create -V` rounds. A thick volume reserves its size.
func (p *Pool) CreateVolume(name string, sizeBytes uint64, provisioning backend.Provisioning) error {
	if err := p.fault(OpCreate, name); err != nil {
		return err
	}
	context := fmt.Sprintf("cannot create '%s'", p.datasetPath(name))
	if why, ok := p.checkName(name, p.datasetPath(name)); !ok {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: %s", context, why)
	}
	if provisioning != backend.Thin && provisioning != backend.Thick {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: unknown provisioning %v", context, provisioning)
	}
	if _, ok := p.volumes[name]; ok {
		return backend.Refusal(backend.ErrExists, tool, "%s: dataset already exists", context)
	}
	if sizeBytes == 0 {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: volume size cannot be zero", context)
	}
	if sizeBytes > maxVolumeSizeBytes {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: volume size is too large", context)
	}
	sizeBytes = roundUp(sizeBytes, p.blockSizeBytes)
	v := &volume{
		name:           name,
		sizeBytes:      sizeBytes,
		blockSizeBytes: p.blockSizeBytes,
		provisioning:   provisioning,
		pending:        map[uint64]*block{},
	}
	if !p.fits(0, nil, v.charge()) {
		return outOfSpace(context)
	}
	v.modifiedTxg = p.nextTxg()
	p.volumes[name] = v
	return nil
}

func roundUp(n, multiple uint64) uint64 {
	if rest := n % multiple; rest != 0 {
		return n + multiple - rest
	}
	return n
}

// ResizeVolume grows a volume (`zfs set volsize`); a thick volume's
// reservation grows with it. Shrinking is baton's refusal, not zfs's: zfs
// would cut the volume's tail off.
func (p *Pool) ResizeVolume(name string, sizeBytes uint64) error {
	if err := p.fault(OpResize, name); err != nil {
		return err
	}
	v, err := p.lookupVolume(name)
	if err != nil {
		return err
	}
	context := fmt.Sprintf("cannot set property for '%s'", p.datasetPath(name))
	// baton refuses a shrink before it asks zfs; a retry of a done resize is a
	// no-op. Then libzfs checks the value, and the kernel the readonly flag.
	switch {
	case sizeBytes < v.sizeBytes:
		return backend.Refusal(backend.ErrInvalid, tool, "%s: 'volsize' cannot shrink from %d to %d bytes",
			context, v.sizeBytes, sizeBytes)
	case sizeBytes == v.sizeBytes:
		return nil
	case sizeBytes%v.blockSizeBytes != 0:
		return backend.Refusal(backend.ErrInvalid, tool, "%s: 'volsize' must be a multiple of volume block size (%s)",
			context, niceBytes(v.blockSizeBytes))
	case sizeBytes > maxVolumeSizeBytes:
		return backend.Refusal(backend.ErrInvalid, tool, "%s: 'volsize' is too large", context)
	case v.readOnly:
		return backend.Refusal(backend.ErrRefused, tool, "%s: dataset is read-only", context)
	}
	next := v.charge()
	if v.provisioning == backend.Thick {
		next.reservationBytes = sizeBytes
	}
	if !p.fits(0, v, next) {
		return outOfSpace(context)
	}
	v.sizeBytes = sizeBytes
	v.modifiedTxg = p.nextTxg()
	return nil
}

// DestroyVolume destroys a volume and its snapshots (`zfs destroy -r`).
func (p *Pool) DestroyVolume(name string) error {
	if err := p.fault(OpDestroy, name); err != nil {
		return err
	}
	v, err := p.lookupVolume(name)
	if err != nil {
		return err
	}
	for _, s := range v.snapshots {
		if s.clones > 0 {
			return backend.Refusal(backend.ErrBusy, tool, "cannot destroy '%s': volume has dependent clones",
				p.datasetPath(name))
		}
	}
	if v.openDevices > 0 {
		return backend.Refusal(backend.ErrBusy, tool, "cannot destroy '%s': dataset is busy", p.datasetPath(name))
	}
	p.releaseNode(v.head)
	for _, s := range v.snapshots {
		p.releaseNode(s.root)
	}
	if v.origin != nil {
		if v.origin.clones == 0 {
			panic("zfs: a clone's origin counts no clones")
		}
		v.origin.clones--
	}
	delete(p.volumes, name)
	p.nextTxg()
	return nil
}

// SetReadOnly sets or clears the volume's readonly property: a read-only
// volume's devices refuse writes, including devices already open, while
// receives, snapshots and rollbacks still work, as they do on a zvol.
func (p *Pool) SetReadOnly(name string, readOnly bool) error {
	if err := p.fault(OpSetReadOnly, name); err != nil {
		return err
	}
	v, err := p.lookupVolume(name)
	if err != nil {
		return err
	}
	v.readOnly = readOnly
	return nil
}
