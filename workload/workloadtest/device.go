// Package workloadtest holds an in-memory block device for testing the
// workload models and anything else that writes through storage/backend.Device.
//
// Fault model: writes go to a volatile layer until Sync makes them durable.
// Crash drops the volatile layer, as a power cut or a node crash does, and
// fails every I/O until Restart. Fenced refuses writes and Syncs, as a DRBD
// Secondary or a read-only zvol does. SyncFails accepts writes but fails every
// Sync, as a DRBD primary that lost quorum does. Copy is a snapshot: the
// content at that moment, synced or not, as a new device.
package workloadtest

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// BlockSizeBytes is the granularity the device stores; any offset works.
const BlockSizeBytes = 4096

// The errors the device's modes produce.
var (
	ErrCrashed    = errors.New("device crashed")
	ErrFenced     = errors.New("device is read-only (fenced)")
	ErrQuorumLost = errors.New("sync failed: quorum lost")
	ErrClosed     = errors.New("device closed")
)

type block = [BlockSizeBytes]byte

// Write is one recorded WriteAt.
type Write struct {
	Offset int64
	Data   []byte
}

// Device is an in-memory block device. It is not safe for concurrent use.
type Device struct {
	sizeBytes int64
	durable   map[int64]*block // survives a crash
	volatile  map[int64]*block // written since the last Sync

	crashed, fenced, syncFails, closed bool
	recording                          bool
	log                                []Write
}

// NewDevice returns a zero-filled device of the given size.
func NewDevice(sizeBytes int64) *Device {
	if sizeBytes <= 0 {
		panic(fmt.Sprintf("workloadtest: device of %d bytes", sizeBytes))
	}
	return &Device{sizeBytes: sizeBytes, durable: map[int64]*block{}, volatile: map[int64]*block{}}
}

// SizeBytes is the device's size.
func (d *Device) SizeBytes() int64 { return d.sizeBytes }

func (d *Device) check(off int64) error {
	switch {
	case d.closed:
		return ErrClosed
	case d.crashed:
		return ErrCrashed
	case off < 0:
		return fmt.Errorf("negative offset %d", off)
	}
	return nil
}

// block returns the current content of a block, nil for zeros.
func (d *Device) block(index int64) *block {
	if b, ok := d.volatile[index]; ok {
		return b
	}
	return d.durable[index]
}

// ReadAt reads what the device holds now, synced or not.
func (d *Device) ReadAt(p []byte, off int64) (int, error) {
	if err := d.check(off); err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) && off+int64(n) < d.sizeBytes {
		pos := off + int64(n)
		index, within := pos/BlockSizeBytes, int(pos%BlockSizeBytes)
		chunk := min(len(p)-n, BlockSizeBytes-within, int(d.sizeBytes-pos))
		if b := d.block(index); b != nil {
			copy(p[n:n+chunk], b[within:within+chunk])
		} else {
			clear(p[n : n+chunk])
		}
		n += chunk
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes into the volatile layer.
func (d *Device) WriteAt(p []byte, off int64) (int, error) {
	if err := d.check(off); err != nil {
		return 0, err
	}
	if d.fenced {
		return 0, ErrFenced
	}
	if off+int64(len(p)) > d.sizeBytes {
		return 0, fmt.Errorf("write of %d bytes at %d beyond the device's %d bytes", len(p), off, d.sizeBytes)
	}
	if d.recording {
		d.log = append(d.log, Write{Offset: off, Data: slices.Clone(p)})
	}
	for n := 0; n < len(p); {
		pos := off + int64(n)
		index, within := pos/BlockSizeBytes, int(pos%BlockSizeBytes)
		chunk := min(len(p)-n, BlockSizeBytes-within)
		b, ok := d.volatile[index]
		if !ok {
			b = new(block)
			if old := d.durable[index]; old != nil {
				*b = *old
			}
			d.volatile[index] = b
		}
		copy(b[within:within+chunk], p[n:n+chunk])
		n += chunk
	}
	return len(p), nil
}

// Sync makes every write so far durable.
func (d *Device) Sync() error {
	if err := d.check(0); err != nil {
		return err
	}
	if d.fenced {
		return ErrFenced
	}
	if d.syncFails {
		return ErrQuorumLost
	}
	for index, b := range d.volatile {
		d.durable[index] = b
	}
	clear(d.volatile)
	return nil
}

// Close refuses every later I/O.
func (d *Device) Close() error {
	d.closed = true
	return nil
}

// Crash drops the writes since the last Sync; I/O fails until Restart.
func (d *Device) Crash() {
	clear(d.volatile)
	d.crashed = true
}

// Restart brings a crashed device back with what it had made durable.
func (d *Device) Restart() { d.crashed = false }

// SetFenced makes the device refuse (or accept again) writes and Syncs.
func (d *Device) SetFenced(fenced bool) { d.fenced = fenced }

// SetSyncFails makes every Sync fail (or succeed again); writes still land in
// the volatile layer.
func (d *Device) SetSyncFails(fails bool) { d.syncFails = fails }

// Copy returns a new device holding what this one holds now, synced or not,
// as durable content: a snapshot.
func (d *Device) Copy() *Device {
	c := NewDevice(d.sizeBytes)
	for index, b := range d.durable {
		copied := *b
		c.durable[index] = &copied
	}
	for index, b := range d.volatile {
		copied := *b
		c.durable[index] = &copied
	}
	return c
}

// CopySynced returns a new device holding only what this one made durable:
// what a crash would leave.
func (d *Device) CopySynced() *Device {
	c := NewDevice(d.sizeBytes)
	for index, b := range d.durable {
		copied := *b
		c.durable[index] = &copied
	}
	return c
}

// Blocks lists the blocks that were ever written, in order.
func (d *Device) Blocks() []int64 {
	var blocks []int64
	for index := range d.durable {
		blocks = append(blocks, index)
	}
	for index := range d.volatile {
		if _, ok := d.durable[index]; !ok {
			blocks = append(blocks, index)
		}
	}
	slices.Sort(blocks)
	return blocks
}

// Block returns a copy of a block's current content.
func (d *Device) Block(index int64) []byte {
	out := make([]byte, BlockSizeBytes)
	if b := d.block(index); b != nil {
		copy(out, b[:])
	}
	return out
}

// SetBlock replaces a block's content durably, bypassing every mode: the
// tests' way to build a corrupt or torn device.
func (d *Device) SetBlock(index int64, data []byte) {
	if len(data) != BlockSizeBytes || index < 0 || (index+1)*BlockSizeBytes > d.sizeBytes {
		panic(fmt.Sprintf("workloadtest: SetBlock %d with %d bytes", index, len(data)))
	}
	b := new(block)
	copy(b[:], data)
	delete(d.volatile, index)
	d.durable[index] = b
}

// FlipBit flips one bit of the device's current content, durably.
func (d *Device) FlipBit(off int64, bit uint) {
	index := off / BlockSizeBytes
	data := d.Block(index)
	data[off%BlockSizeBytes] ^= 1 << (bit % 8)
	d.SetBlock(index, data)
}

// Record starts (or stops) recording every successful WriteAt.
func (d *Device) Record(on bool) { d.recording = on }

// Log returns the recorded writes, oldest first.
func (d *Device) Log() []Write { return d.log }
