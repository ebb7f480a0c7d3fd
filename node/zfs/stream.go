package zfs

import (
	"context"
	"io"
	"strings"
	"sync"

	"github.com/baton-dr/baton/storage/backend"
)

// Send streams volume@snapshot, whole or from base: a snapshot of the same
// volume ("s1") or, for a clone, its origin ("volume@snapshot"). A dry run
// (`zfs send -n -P`) goes first, so that zfs's refusal of a missing or later
// base returns from Send itself rather than from the stream's first Read.
func (p *Pool) Send(volume, base, snapshot string) (io.ReadCloser, error) {
	path := p.snapshotPath(volume, snapshot)
	if err := p.checkSnapshotName("send", path, volume, snapshot); err != nil {
		return nil, err
	}
	args := []string{"send"}
	if base != "" {
		basePath, err := p.basePath(volume, base)
		if err != nil {
			return nil, err
		}
		args = append(args, "-i", basePath)
	}
	args = append(args, path)
	dryRun := append([]string{"send", "-n", "-P"}, args[1:]...)
	if _, err := p.zfs(dryRun...); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	reader, writer := io.Pipe()
	s := &sendStream{reader: reader, cancel: cancel}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := p.options.Cmder.Command(ctx, "zfs", args...).SetStdout(writer).Run()
		if err != nil {
			err = classify(err)
		}
		writer.CloseWithError(err)
	}()
	return s, nil
}

// basePath names an incremental stream's base: "s1" is a snapshot of the
// sent volume, "origin@s1" one of another volume (a clone's origin).
func (p *Pool) basePath(volume, base string) (string, error) {
	baseVolume, baseSnapshot, ok := strings.Cut(base, "@")
	if !ok {
		baseVolume, baseSnapshot = volume, base
	}
	path := p.snapshotPath(baseVolume, baseSnapshot)
	if err := p.checkSnapshotName("send", path, baseVolume, baseSnapshot); err != nil {
		return "", err
	}
	return path, nil
}

// sendStream is a running `zfs send`: reading it reads the process's stdout;
// closing it kills the process if it still runs and waits for it to go.
type sendStream struct {
	reader *io.PipeReader
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

func (s *sendStream) Read(b []byte) (int, error) { return s.reader.Read(b) }

func (s *sendStream) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.reader.Close()
		s.wg.Wait()
	})
	return nil
}

// Receive applies a stream with `zfs receive -u`, never -F: zfs refuses a
// target written since its last snapshot rather than rolling it back, and an
// existing target of a full stream. zfs receives all or nothing: a broken
// stream leaves no partial volume or snapshot behind.
func (p *Pool) Receive(volume string, stream io.Reader) error {
	dataset := p.DatasetPath(volume)
	if err := checkName("receive", dataset, volume); err != nil {
		return err
	}
	// The stream, not a clock, bounds a receive: it ends when its sender does.
	err := p.options.Cmder.Command(context.Background(), "zfs", "receive", "-u", dataset).SetStdin(stream).Run()
	if err != nil {
		return classify(err)
	}
	return nil
}

var _ backend.Pool = (*Pool)(nil)
