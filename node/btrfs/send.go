package btrfs

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/baton-dr/baton/storage/backend"
)

// maxOriginHops bounds a walk up a chain of clones, as storage/chain bounds
// its walks: far above any real chain, and a loop is an error, not a hang.
const maxOriginHops = 256

// Send streams a snapshot with `btrfs send`, behind the envelope of
// stream.go. The base is a snapshot of the same volume ("s1") or, for a
// clone, its origin or an earlier snapshot of the origin's lineage
// ("volume@s1"); the stream then carries what changed since the base, found
// by btrfs comparing the two snapshots' trees.
func (p *Pool) Send(volume, base, snapshotName string) (io.ReadCloser, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	action := fmt.Sprintf("cannot send '%s@%s'", volume, snapshotName)
	if _, err := p.lookup(volume, action); err != nil {
		return nil, err
	}
	all, err := p.allSnapshots(ctx)
	if err != nil {
		return nil, err
	}
	s, ok := findSnapshot(all[volume], snapshotName)
	if !ok {
		return nil, refuse(backend.ErrNotFound, "%s: dataset does not exist", action)
	}
	paths := []string{p.layout.snapshot(volume, snapshotName)}
	clone := false
	if base != "" {
		b, err := p.sendBase(all, s, base, action)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p.layout.snapshot(b.volume, b.name))
		clone = b.volume != volume
	}
	return p.startSend(paths, clone), nil
}

// sendBase resolves a base and checks that it comes before the snapshot in
// the snapshot's lineage, as zfs send checks it.
func (p *Pool) sendBase(all map[string][]snapshot, s snapshot, base, action string) (snapshot, error) {
	baseVolume, baseName := s.volume, base
	if strings.Contains(base, "@") {
		var ok bool
		if baseVolume, baseName, ok = splitOrigin(base); !ok {
			return snapshot{}, refuse(backend.ErrInvalid, "%s: bad incremental source '%s'", action, base)
		}
	}
	b, ok := findSnapshot(all[baseVolume], baseName)
	if !ok {
		return snapshot{}, refuse(backend.ErrNotFound, "%s: incremental source '%s@%s' does not exist", action, baseVolume, baseName)
	}
	before, err := p.before(all, b, s)
	if err != nil {
		return snapshot{}, err
	}
	if !before {
		return snapshot{}, refuse(backend.ErrInvalid, "%s: '%s@%s' is not an earlier snapshot of its lineage", action, baseVolume, baseName)
	}
	return b, nil
}

// before reports whether earlier precedes later in later's lineage: an
// older snapshot of later's volume, or, up the chain of origins, a volume's
// origin or an older snapshot of the origin's volume.
func (p *Pool) before(all map[string][]snapshot, earlier, later snapshot) (bool, error) {
	if earlier.cgeneration >= later.cgeneration {
		return false, nil
	}
	metas, err := p.allMeta()
	if err != nil {
		return false, err
	}
	volume := later.volume
	for hop := 0; hop < maxOriginHops; hop++ {
		if volume == earlier.volume {
			return true, nil
		}
		originVolume, originName, ok := splitOrigin(metas[volume].Origin)
		if !ok {
			return false, nil
		}
		origin, found := findSnapshot(all[originVolume], originName)
		if !found || earlier.cgeneration > origin.cgeneration {
			return false, nil
		}
		volume = originVolume
	}
	return false, fmt.Errorf("the origins of %s form a chain of more than %d hops", later.volume, maxOriginHops)
}

// startSend runs `btrfs send` with its output flowing into the returned
// stream; paths are the snapshot and, for a delta, its base. The pool counts
// the send in flight until the command ends, so that neither snapshot is
// destroyed under it.
func (p *Pool) startSend(paths []string, clone bool) io.ReadCloser {
	for _, path := range paths {
		p.sending[path]++
	}
	ctx, cancel := context.WithCancel(context.Background())
	reader, writer := io.Pipe()
	stream := &sendStream{header: envelope(clone), pipe: reader, cancel: cancel, done: make(chan struct{})}
	parent := ""
	if len(paths) == 2 {
		parent = paths[1]
	}
	go func() {
		defer close(stream.done)
		err := p.btrfs.send(ctx, parent, paths[0], writer)
		writer.CloseWithError(err) // nil: the reader sees io.EOF
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, path := range paths {
			if p.sending[path]--; p.sending[path] == 0 {
				delete(p.sending, path)
			}
		}
	}()
	return stream
}

// sendStream is a running send: the envelope, then btrfs send's output.
type sendStream struct {
	header []byte // what is left to read of the envelope
	pipe   *io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

func (s *sendStream) Read(buf []byte) (int, error) {
	if len(s.header) > 0 {
		n := copy(buf, s.header)
		s.header = s.header[n:]
		return n, nil
	}
	return s.pipe.Read(buf)
}

// Close stops the send if it still runs and waits for its end.
func (s *sendStream) Close() error {
	s.once.Do(func() {
		s.pipe.Close()
		s.cancel()
		<-s.done
	})
	return nil
}
