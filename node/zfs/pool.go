package zfs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/localdevice"
	"github.com/baton-dr/baton/storage/backend"
)

// Options configure a Pool.
type Options struct {
	// Cmder runs zfs and udevadm: on this machine (exec.Local), in a guest, or
	// a test double.
	Cmder exec.Cmder
	// Dataset holds the pool's volumes: the pool's root ("tank") or a dataset
	// in it ("tank/baton"). It must exist; New adopts it.
	Dataset string
	// Devices reaches the zvols' devices where Cmder runs; the zero value
	// reaches this machine's.
	localdevice.Devices
	// CommandTimeout bounds each command but the streams of Send and Receive,
	// which live as long as their reader; zero means DefaultCommandTimeout.
	CommandTimeout time.Duration
}

// DefaultCommandTimeout bounds one zfs command: generous, because a destroy
// or a snapshot waits for a transaction group to sync.
const DefaultCommandTimeout = 2 * time.Minute

// Pool is backend.Pool on the zvols under one dataset. It keeps no state of
// its own: every call asks zfs, so a restarted agent sees what is there.
type Pool struct {
	options Options
}

var _ backend.Pool = (*Pool)(nil)

// New adopts the dataset that holds the volumes; it creates nothing.
func New(options Options) (*Pool, error) {
	if options.Cmder == nil || options.Dataset == "" {
		return nil, errors.New("zfs: a Cmder and a dataset are required")
	}
	if options.CommandTimeout == 0 {
		options.CommandTimeout = DefaultCommandTimeout
	}
	options.Devices = options.Devices.OrThisMachine()
	p := &Pool{options: options}
	if _, err := p.zfs("list", "-H", "-p", "-o", "name", options.Dataset); err != nil {
		return nil, fmt.Errorf("failed to adopt dataset %s: %w", options.Dataset, err)
	}
	return p, nil
}

// Dataset is the dataset that holds the volumes.
func (p *Pool) Dataset() string { return p.options.Dataset }

// DatasetPath is a volume's dataset: "tank/pvc-1".
func (p *Pool) DatasetPath(volume string) string { return p.options.Dataset + "/" + volume }

// DevicePath is where Linux exposes a volume: what DRBD takes as its disk.
func (p *Pool) DevicePath(volume string) string { return "/dev/zvol/" + p.DatasetPath(volume) }

func (p *Pool) snapshotPath(volume, snapshot string) string {
	return p.DatasetPath(volume) + "@" + snapshot
}

// zfs runs one zfs command to its end and returns its stdout; a refusal
// comes back classified.
func (p *Pool) zfs(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.options.CommandTimeout)
	defer cancel()
	out, err := exec.Output(p.options.Cmder.Command(ctx, "zfs", args...))
	if err != nil {
		return nil, classify(err)
	}
	return out, nil
}

// Usage reports the space of the pool's dataset: what its volumes use,
// reservations included, and what they may still take. Their sum is the
// capacity the dataset can reach, less what zfs keeps back (slop space).
func (p *Pool) Usage() (backend.Usage, error) {
	out, err := p.zfs("list", "-H", "-p", "-o", "used,available", p.options.Dataset)
	if err != nil {
		return backend.Usage{}, err
	}
	space, err := parseSpace(out)
	if err != nil {
		return backend.Usage{}, errUnexpected("list", err)
	}
	return backend.Usage{
		SizeBytes:      space.usedBytes + space.availableBytes,
		AllocatedBytes: space.usedBytes,
		FreeBytes:      space.availableBytes,
	}, nil
}
