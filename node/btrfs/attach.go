package btrfs

import (
	"cmp"
	"context"
	"errors"
	"os"
	"slices"

	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/storage/backend"
)

// attachment is a volume's head file attached as a loop device. The pool
// attaches it at a volume's first Open and detaches it at its last Close, so
// a volume nobody uses holds no loop device, and a loop device never outlives
// the file it shows (a rollback or a receive replaces the head file).
type attachment struct {
	device string
	// control is the pool's own descriptor of the device: it flushes the
	// device's cache before a snapshot and sets the read-only fence.
	control *os.File
	opens   int // Devices open on it
}

// attach attaches a volume's head file, or returns its attachment. The
// caller holds the lock.
func (p *Pool) attach(ctx context.Context, volume string, meta volumeMeta) (*attachment, error) {
	if a, ok := p.attached[volume]; ok {
		return a, nil
	}
	device, err := p.losetup.Attach(ctx, p.layout.data(volume), p.directIO)
	if err != nil {
		return nil, classify(err)
	}
	a, err := p.adopt(device, meta.ReadOnly)
	if err != nil {
		return nil, errors.Join(err, p.losetup.Detach(ctx, device))
	}
	p.attached[volume] = a
	return a, nil
}

// adopt opens a control descriptor on an attached device and sets its fence
// either way: a loop device keeps the read-only flag of its previous user.
func (p *Pool) adopt(device string, readOnly bool) (*attachment, error) {
	control, err := os.Open(device)
	if err != nil {
		return nil, err
	}
	if err := loop.SetReadOnly(control, readOnly); err != nil {
		return nil, errors.Join(err, control.Close())
	}
	return &attachment{device: device, control: control}, nil
}

// detach detaches a volume's loop device if it has one. The caller checked
// that no Device is open on it. The fence is lifted first, so that the next
// user of the loop device does not inherit it.
func (p *Pool) detach(ctx context.Context, volume string) error {
	a, ok := p.attached[volume]
	if !ok {
		return nil
	}
	if a.opens != 0 {
		panic("btrfs: detaching a loop device with open devices: " + a.device)
	}
	delete(p.attached, volume)
	err := loop.SetReadOnly(a.control, false)
	return errors.Join(err, a.control.Close(), p.losetup.Detach(ctx, a.device))
}

// release makes a volume's head replaceable: ErrBusy while a Device is open,
// and its idle loop device detached.
func (p *Pool) release(ctx context.Context, volume, action string) error {
	if a, ok := p.attached[volume]; ok && a.opens > 0 {
		return refuse(backend.ErrBusy, "%s: volume is open as %s", action, a.device)
	}
	return p.detach(ctx, volume)
}

// adoptAttachments takes over the loop devices a previous run left on head
// files: they are the pool's again, idle, until a release detaches them. A
// device is recognised by its backing file's identity, not by the path
// losetup shows: one attached from another mount namespace (the agent's
// previous container) shows another path, and attaching the head file a
// second time would give one file two devices, each with its own cache.
func (p *Pool) adoptAttachments(ctx context.Context) error {
	heads, err := p.headFiles()
	if err != nil {
		return err
	}
	devices, err := loop.List(ctx)
	if err != nil {
		return err
	}
	slices.SortFunc(devices, func(a, b loop.Device) int { return cmp.Compare(a.Name, b.Name) })
	for _, d := range devices {
		i := slices.IndexFunc(heads, func(h head) bool { return d.Backs(h.info) })
		if i < 0 {
			continue // not a volume of this pool: the device stays as it is
		}
		volume := heads[i].volume
		if _, dup := p.attached[volume]; dup {
			continue // a second stale attachment stays as it is
		}
		meta, err := readMeta(p.layout.meta(volume))
		if err != nil {
			return err
		}
		a, err := p.adopt(d.Name, meta.ReadOnly)
		if err != nil {
			return err
		}
		p.attached[volume] = a
	}
	return nil
}

// head is one volume's head file.
type head struct {
	volume string
	info   os.FileInfo
}

// headFiles lists the head files of the pool's volumes, those with metadata.
func (p *Pool) headFiles() ([]head, error) {
	entries, err := os.ReadDir(p.layout.volumes())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var heads []head
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(p.layout.meta(e.Name())); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		info, err := os.Stat(p.layout.data(e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		heads = append(heads, head{volume: e.Name(), info: info})
	}
	return heads, nil
}
