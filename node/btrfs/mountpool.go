package btrfs

import (
	"context"
	"errors"
	"os"

	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/storage/backend"
)

// mountPool finds or makes the pool's filesystem and returns its loop
// device: a filesystem already mounted on the mount directory is adopted; an
// image is attached (or its attachment reused), probed, formatted only when
// blank, and mounted.
func (p *Pool) mountPool(ctx context.Context, sizeBytes uint64) (string, error) {
	image := p.layout.image()
	if m, ok, err := findMount(ctx, p.cmder, p.layout.mount()); err != nil || ok {
		if err != nil {
			return "", err
		}
		return p.adoptMount(ctx, m)
	}
	if err := createImage(image, sizeBytes); err != nil {
		return "", err
	}
	device, attachedHere, err := p.attachImage(ctx)
	if err != nil {
		return "", err
	}
	err = p.formatIfBlank(ctx, device)
	if err == nil {
		err = mount(ctx, p.cmder, device, p.layout.mount())
	}
	if err != nil && attachedHere {
		err = errors.Join(err, p.losetup.Detach(ctx, device))
	}
	return device, err
}

// adoptMount takes a filesystem a previous run left mounted, if it is this
// pool's: btrfs on the loop device of this pool's image.
func (p *Pool) adoptMount(ctx context.Context, m mounted) (string, error) {
	image, err := os.Stat(p.layout.image())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	devices, err := loop.List(ctx)
	if err != nil {
		return "", err
	}
	for _, d := range devices {
		if d.Name == m.source && image != nil && d.Backs(image) && m.fsType == "btrfs" {
			return m.source, nil
		}
	}
	return "", refuse(backend.ErrInvalid, "%s has %s (%s) mounted, not this pool's image %s",
		p.layout.mount(), m.source, m.fsType, p.layout.image())
}

// createImage creates a sparse image of sizeBytes unless one exists.
func createImage(image string, sizeBytes uint64) error {
	if _, err := os.Stat(image); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if sizeBytes == 0 {
		return refuse(backend.ErrNotFound, "no pool image %s, and no size to create one", image)
	}
	if sizeBytes < minPoolBytes {
		return refuse(backend.ErrInvalid, "a pool of %d bytes is below the %d bytes btrfs needs", sizeBytes, minPoolBytes)
	}
	f, err := os.OpenFile(image, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = f.Truncate(int64(sizeBytes))
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return errors.Join(err, os.Remove(image))
	}
	return nil
}

// attachImage reuses the loop device the image is attached to, if any, or
// attaches it; attachedHere says which. The attachment is recognised by the
// file's identity, not by the path losetup shows: a device attached from
// another mount namespace (the agent's previous container) shows the image
// under another name, and attaching the image a second time would give the
// kernel two devices holding one btrfs -- from Linux 6.7 it mounts the second
// as a separate read-write instance (temp-fsid), and two instances writing
// one image corrupt it.
func (p *Pool) attachImage(ctx context.Context) (device string, attachedHere bool, err error) {
	image, err := os.Stat(p.layout.image())
	if err != nil {
		return "", false, err
	}
	devices, err := loop.List(ctx)
	if err != nil {
		return "", false, err
	}
	for _, d := range devices {
		if d.Backs(image) {
			return d.Name, false, nil
		}
	}
	device, err = p.losetup.Attach(ctx, p.layout.image(), false)
	return device, err == nil, err
}

// formatIfBlank makes the filesystem on a device that holds no signature at
// all, adopts one that holds btrfs, and refuses anything else.
func (p *Pool) formatIfBlank(ctx context.Context, device string) error {
	found, err := probeFilesystem(ctx, p.cmder, device)
	switch {
	case err != nil:
		return err
	case found == "btrfs":
		return nil
	case found != "":
		return refuse(backend.ErrInvalid, "%s (%s) holds %s, not btrfs: the pool formats only blank images",
			p.layout.image(), device, found)
	}
	return mkfs(ctx, p.cmder, device, label)
}
