package zfs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// CreateVolume creates a zvol: sparse (-s) for Thin, with zfs's own
// refreservation for Thick. zfs refuses an existing name (ErrExists) and a
// thick size beyond the free space ("out of space", ErrPoolFull).
func (p *Pool) CreateVolume(name string, sizeBytes uint64, provisioning backend.Provisioning) error {
	dataset := p.DatasetPath(name)
	if err := checkName("create", dataset, name); err != nil {
		return err
	}
	args := []string{"create"}
	switch provisioning {
	case backend.Thin:
		args = append(args, "-s")
	case backend.Thick:
	default:
		return refuse(backend.ErrInvalid, "cannot create '%s': unknown provisioning %v", dataset, provisioning)
	}
	_, err := p.zfs(append(args, "-V", strconv.FormatUint(sizeBytes, 10), dataset)...)
	return err
}

// ResizeVolume grows a volume. zfs would shrink one, cutting its tail off,
// so baton refuses a shrink before zfs runs; a retried grow is a no-op.
func (p *Pool) ResizeVolume(name string, sizeBytes uint64) error {
	info, err := p.Volume(name)
	if err != nil {
		return err
	}
	dataset := p.DatasetPath(name)
	switch {
	case sizeBytes < info.SizeBytes:
		return refuse(backend.ErrInvalid, "cannot set property for '%s': 'volsize' cannot shrink from %d to %d bytes",
			dataset, info.SizeBytes, sizeBytes)
	case sizeBytes == info.SizeBytes:
		return nil
	}
	_, err = p.zfs("set", "volsize="+strconv.FormatUint(sizeBytes, 10), dataset)
	return err
}

// DestroyVolume destroys a volume and its snapshots (-r), never the clones
// of its snapshots (-R): zfs refuses those with "has dependent clones".
//
// A zvol that a writer just closed is busy for a moment: udev watches block
// devices and probes one (blkid) when a writer closes it. A busy volume is
// tried again once udev has settled, a bounded number of times; a volume
// held open for real stays busy and is refused.
func (p *Pool) DestroyVolume(name string) error {
	dataset := p.DatasetPath(name)
	if err := checkName("destroy", dataset, name); err != nil {
		return err
	}
	var err error
	for attempt := 0; attempt < busyAttempts; attempt++ {
		if attempt > 0 {
			p.settleUdev()
		}
		if _, err = p.zfs("destroy", "-r", dataset); !errors.Is(err, backend.ErrBusy) {
			return err
		}
	}
	return err
}

// busyAttempts bounds the tries of a destroy that finds the zvol busy.
const busyAttempts = 3

// settleUdev waits for udev to finish the events it has queued, such as the
// probe of a zvol a writer closed. A failure only means a shorter wait.
func (p *Pool) settleUdev() {
	ctx, cancel := context.WithTimeout(context.Background(), p.options.CommandTimeout)
	defer cancel()
	_ = p.options.Cmder.Command(ctx, "udevadm", "settle", "--timeout="+strconv.Itoa(udevTimeoutSeconds)).Run()
}

// SetReadOnly fences a volume (or lifts the fence): readonly=on, for the
// opens to come (zfs 2.1 reads it only when the zvol is first opened), then
// the fence on the zvol's device (package fence): its read-only flag, which
// the kernel checks on every write through the device, on descriptors opened
// before too (EPERM, ErrRefused), and the shutdown of an ext4 or xfs mounted
// from it, whose bios the flag lets through. A zvol that is DRBD's backing
// disk has no mount: its fence passes only once the DRBD device on top is
// fenced (fence.ErrUnfencedHolder otherwise). The fence fails closed, and
// is tried again by the next call; lifting it over a file system it shut
// down, still mounted, lifts it and reports fence.ErrStillShutDown.
func (p *Pool) SetReadOnly(name string, readOnly bool) error {
	dataset := p.DatasetPath(name)
	if err := checkName("set property for", dataset, name); err != nil {
		return err
	}
	value := "off"
	if readOnly {
		value = "on"
	}
	if _, err := p.zfs("set", "readonly="+value, dataset); err != nil {
		return err
	}
	path := p.DevicePath(name)
	if err := p.awaitDevice(path); err != nil {
		return err
	}
	if err := p.options.FenceDevice(path, readOnly); err != nil {
		if readOnly {
			return fmt.Errorf("failed to fence %s: %w", path, err)
		}
		return fmt.Errorf("failed to lift the fence of %s: %w", path, err)
	}
	return nil
}

// Volume describes one volume.
func (p *Pool) Volume(name string) (backend.VolumeInfo, error) {
	dataset := p.DatasetPath(name)
	if err := checkName("open", dataset, name); err != nil {
		return backend.VolumeInfo{}, err
	}
	out, err := p.zfs("list", "-H", "-p", "-t", "volume", "-o", volumeColumns, dataset)
	if err != nil {
		return backend.VolumeInfo{}, err
	}
	rows, err := parseVolumes(out)
	if err != nil {
		return backend.VolumeInfo{}, errUnexpected("list", err)
	}
	if len(rows) != 1 || rows[0].dataset != dataset {
		// A filesystem of that name is not one of the pool's volumes.
		return backend.VolumeInfo{}, refuse(backend.ErrNotFound, "cannot open '%s': dataset does not exist", dataset)
	}
	return p.volumeInfo(rows[0]), nil
}

// Volumes lists the volumes directly under the pool's dataset, by name.
func (p *Pool) Volumes() ([]backend.VolumeInfo, error) {
	out, err := p.zfs("list", "-H", "-p", "-t", "volume", "-o", volumeColumns, "-r", "-d", "1", p.options.Dataset)
	if err != nil {
		return nil, err
	}
	rows, err := parseVolumes(out)
	if err != nil {
		return nil, errUnexpected("list", err)
	}
	volumes := make([]backend.VolumeInfo, 0, len(rows))
	for _, row := range rows {
		if _, ok := strings.CutPrefix(row.dataset, p.options.Dataset+"/"); ok {
			volumes = append(volumes, p.volumeInfo(row))
		}
	}
	sort.Slice(volumes, func(i, j int) bool { return volumes[i].Name < volumes[j].Name })
	return volumes, nil
}

// volumeInfo names a listed volume as the pool does: relative to its
// dataset, and its origin "volume@snapshot" when the origin is one of the
// pool's volumes.
func (p *Pool) volumeInfo(row volumeRow) backend.VolumeInfo {
	prefix := p.options.Dataset + "/"
	info := backend.VolumeInfo{
		Name:      strings.TrimPrefix(row.dataset, prefix),
		SizeBytes: row.sizeBytes,
		UsedBytes: row.usedBytes,
		ReadOnly:  row.readOnly,
		Origin:    strings.TrimPrefix(row.origin, prefix),
	}
	if row.refreservationBytes > 0 {
		info.Provisioning = backend.Thick
	}
	return info
}
