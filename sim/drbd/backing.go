package drbd

import (
	"errors"

	"github.com/baton-dr/baton/storage/backend"
)

// attachment is an opened backing volume and what its metadata area holds.
type attachment struct {
	device      backend.Device
	sizeBytes   uint64 // the volume's size
	usableBytes uint64 // the DRBD device's size: whole blocks before the metadata
	sb          superblock
	found       bool // an intact superblock is there
}

// openBacking opens a node's volume and reads its metadata area. The caller
// closes the device.
func (c *Cluster) openBacking(n *node, volume string) (attachment, error) {
	dev, err := n.open(volume)
	if err != nil {
		kind := backend.ErrNotFound
		if errors.Is(err, backend.ErrBusy) {
			kind = backend.ErrBusy
		}
		return attachment{}, backend.Refusal(kind, "drbdmeta", "open(%s) failed: %v", volume, err)
	}
	size := probeSize(dev)
	if size < 2*superblockBytes {
		dev.Close()
		return attachment{}, backend.Refusal(backend.ErrInvalid, "drbdmeta", "%s: Meta device too small. (%d bytes)", volume, size)
	}
	a := attachment{device: dev, sizeBytes: size, usableBytes: size/blockBytes*blockBytes - superblockBytes}
	block := make([]byte, superblockBytes)
	if _, err := dev.ReadAt(block, int64(a.usableBytes)); err != nil {
		dev.Close()
		return attachment{}, backend.Refusal(backend.ErrInvalid, "drbdmeta", "%s: reading meta-data: %v", volume, err)
	}
	a.sb, a.found = decodeSuperblock(block)
	return a, nil
}

// maxProbeBits bounds the size probe: no volume is 2^62 bytes.
const maxProbeBits = 62

// probeSize finds a device's size by reading single bytes, because the Device
// interface has no size while every device answers a read past its end with
// io.EOF and no bytes, as a block device does.
func probeSize(dev backend.Device) uint64 {
	var b [1]byte
	readable := func(offset uint64) bool {
		n, _ := dev.ReadAt(b[:], int64(offset))
		return n == 1
	}
	if !readable(0) {
		return 0
	}
	low, high := uint64(0), uint64(1) // readable(low), and high is probed next
	for bit := 0; readable(high); bit++ {
		if bit == maxProbeBits {
			panic("drbd: backing device claims more than 2^62 bytes")
		}
		low, high = high, high*2
	}
	for high-low > 1 { // bounded: halves a range below 2^62
		mid := low + (high-low)/2
		if readable(mid) {
			low = mid
		} else {
			high = mid
		}
	}
	return low + 1
}
