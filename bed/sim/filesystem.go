package sim

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// A filesystem on a simulated device is its superblock: the device's first
// block says which filesystem it is, as blkid reads it from a real one. The
// blocks after the head (filesystemBytes) are the application's files,
// which the workload models write as blocks; a blank device -- all zeros,
// as a new volume is -- carries no filesystem. Living in the data, a
// filesystem ships with the snapshots and is found on every clone.

const (
	// filesystemBytes is the head of a volume of files its filesystem keeps
	// for itself.
	filesystemBytes = 1 << 20
	// superblockBytes is the block the signature is written in.
	superblockBytes = 4096
	devicePrefix    = "/dev/sim/"
)

// filesystemMagic starts a simulated superblock; the filesystem's type
// follows it, then a zero byte.
var filesystemMagic = []byte("baton-sim-filesystem:")

// devicePath is the path the node plugin is given for a dataset's device.
func devicePath(dataset string) string { return devicePrefix + dataset }

// openPath opens the device at a path devicePath made, on node n.
func (n *Node) openPath(device string) (backend.Device, error) {
	dataset, ok := strings.CutPrefix(device, devicePrefix)
	if !ok {
		return nil, fmt.Errorf("%s: no such device on %s", device, n.Endpoint)
	}
	return n.open(dataset)
}

// filesystemOn reads which filesystem the device carries; "" for none.
func (n *Node) filesystemOn(device string) (string, error) {
	d, err := n.openPath(device)
	if err != nil {
		return "", err
	}
	defer d.Close()
	block := make([]byte, superblockBytes)
	if _, err := d.ReadAt(block, 0); err != nil {
		return "", fmt.Errorf("read the superblock of %s: %w", device, err)
	}
	fsType, found := bytes.CutPrefix(block, filesystemMagic)
	if !found {
		return "", nil
	}
	end := bytes.IndexByte(fsType, 0)
	if end <= 0 {
		return "", fmt.Errorf("%s: a damaged superblock", device)
	}
	return string(fsType[:end]), nil
}

// format writes a filesystem's superblock onto the device, synced.
func (n *Node) format(device, fsType string) error {
	if fsType == "" || strings.IndexByte(fsType, 0) >= 0 || len(filesystemMagic)+len(fsType) >= superblockBytes {
		return fmt.Errorf("mkfs: no filesystem type %q", fsType)
	}
	d, err := n.openPath(device)
	if err != nil {
		return err
	}
	defer d.Close()
	block := make([]byte, superblockBytes)
	copy(block[copy(block, filesystemMagic):], fsType)
	if _, err := d.WriteAt(block, 0); err != nil {
		return fmt.Errorf("mkfs.%s %s: %w", fsType, device, err)
	}
	return d.Sync()
}

// filesView is the part of a filesystem's device the application's files
// take: the device after the filesystem's head.
type filesView struct{ backend.Device }

func (f filesView) ReadAt(p []byte, offset int64) (int, error) {
	return f.Device.ReadAt(p, offset+filesystemBytes)
}

func (f filesView) WriteAt(p []byte, offset int64) (int, error) {
	return f.Device.WriteAt(p, offset+filesystemBytes)
}

// checkMounted says whether a mount of device as fsType may go ahead: the
// kernel refuses a filesystem that is not on the device (mount: exit status
// 32, wrong fs type).
func (n *Node) checkMounted(device, fsType string) error {
	found, err := n.filesystemOn(device)
	if err != nil {
		return err
	}
	if found == "" || found != fsType {
		return fmt.Errorf("mount -t %s %s: wrong fs type, bad superblock (exit status 32): the device carries %q", fsType, device, found)
	}
	return nil
}
