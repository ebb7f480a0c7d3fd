package btrfs

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// benchmarkReplication writes a 256 MiB volume whole, then per iteration
// changes 1% of it (untimed) and times a snapshot and the incremental send
// from the previous snapshot, and with receive the delta's receive into a
// replica on a second pool. It reports the stream's bytes per iteration.
func benchmarkReplication(b *testing.B, receive bool) {
	a, replica := newTestPool(b), newTestPool(b)
	must(b, a.CreateVolume("v", bigVolumeSize, backend.Thin), "CreateVolume")
	pooltest.Write(b, a, "v", 0, pooltest.Pattern(20, bigVolumeSize))
	must(b, a.Snapshot("v", "s0"), "Snapshot s0")
	if receive {
		var full bytes.Buffer
		streamBytes(b, a, "v", "", "s0", &full)
		must(b, replica.Receive("r", &full), "Receive the full stream")
	}
	var shipped int64
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		b.StopTimer()
		changed := changeOnePercent(b, a, "v", bigVolumeSize, uint64(1000*i))
		b.SetBytes(int64(changed))
		previous, next := fmt.Sprintf("s%d", i-1), fmt.Sprintf("s%d", i)
		var delta bytes.Buffer
		b.StartTimer()
		must(b, a.Snapshot("v", next), "Snapshot")
		if !receive {
			shipped += streamBytes(b, a, "v", previous, next, io.Discard)
			continue
		}
		shipped += streamBytes(b, a, "v", previous, next, &delta)
		must(b, replica.Receive("r", &delta), "Receive the delta")
	}
	b.StopTimer()
	b.ReportMetric(float64(shipped)/float64(b.N), "stream-bytes/op")
}

func BenchmarkSnapshotAndIncrementalSend256MiB1Percent(b *testing.B) {
	benchmarkReplication(b, false)
}

func BenchmarkSnapshotSendAndReceive256MiB1Percent(b *testing.B) {
	benchmarkReplication(b, true)
}

// benchmarkDeviceWrite times writing and syncing 64 MiB through a volume's
// loop device, attached with or without --direct-io.
func benchmarkDeviceWrite(b *testing.B, directIO bool) {
	needRoot(b)
	dir := b.TempDir()
	p, err := New(Options{Dir: dir, SizeBytes: poolBytes, DirectIO: directIO})
	must(b, err, "New")
	b.Cleanup(func() { must(b, p.Close(), "Close") })
	const size = 64 * mib
	must(b, p.CreateVolume("v", size, backend.Thin), "CreateVolume")
	data := pooltest.Pattern(30, size)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		data[0] = byte(i) // each pass writes new content
		pooltest.Write(b, p, "v", 0, data)
	}
}

func BenchmarkDeviceWrite64MiBBuffered(b *testing.B) { benchmarkDeviceWrite(b, false) }
func BenchmarkDeviceWrite64MiBDirectIO(b *testing.B) { benchmarkDeviceWrite(b, true) }
