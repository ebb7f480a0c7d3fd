package zfs

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

const (
	mib = 1 << 20
	tib = 1 << 40
)

// writeScattered writes count blocks spread evenly over a volume, one
// WriteAt each, and syncs: the worst case for the tree, every block on a
// path of its own.
func writeScattered(tb testing.TB, p *Pool, volume string, count int, fill byte) {
	v := p.volumes[volume]
	dev, err := p.Open(volume)
	if err != nil {
		tb.Fatal(err)
	}
	data := bytes.Repeat([]byte{fill}, int(v.blockSizeBytes))
	blocks := v.sizeBytes / v.blockSizeBytes
	stride := blocks / uint64(count)
	for i := 0; i < count; i++ {
		data[0] = byte(i)
		if _, err := dev.WriteAt(data, int64(uint64(i)*stride*v.blockSizeBytes)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := dev.Close(); err != nil {
		tb.Fatal(err)
	}
}

func heapBytes() uint64 {
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

// TestThinTerabyteVolumeCostsMegabytes: memory follows the blocks written,
// never the volume's size. 10 MiB written into a 1 TiB thin volume, each
// block on its own path, must cost megabytes (the bound is generous: the
// data is 10 MiB and the tree adds a few).
func TestThinTerabyteVolumeCostsMegabytes(t *testing.T) {
	before := heapBytes()
	p := New(Options{SizeBytes: 2 * tib, Seed: 1})
	mustDo(t, p.CreateVolume("big", tib, backend.Thin))
	writeScattered(t, p, "big", 10*mib/DefaultBlockSizeBytes, 1)
	mustDo(t, p.Snapshot("big", "s"))
	after := heapBytes()
	runtime.KeepAlive(p)
	grown := int64(after) - int64(before)
	t.Logf("1 TiB thin volume with 10 MiB written: %.1f MiB of heap", float64(grown)/mib)
	if grown > 32*mib {
		t.Fatalf("the volume costs %d bytes of heap", grown)
	}
	if got := allocated(t, p); got != 10*mib {
		t.Fatalf("the pool allocates %d bytes for 10 MiB written", got)
	}
}

// TestIncrementalSendShipsExactlyTheChangedBlocks: a delta carries the changed
// blocks and nothing else, so its size is the header, the snapshot's name,
// one record per changed block and the trailer, to the byte.
func TestIncrementalSendShipsExactlyTheChangedBlocks(t *testing.T) {
	p, changed := filledVolume(t, 64*mib)
	mustDo(t, p.Snapshot("v", "s0"))
	writeScattered(t, p, "v", changed, 2)
	mustDo(t, p.Snapshot("v", "s1"))
	stream := sendOf(t, p, "v", "s0", "s1")
	bs := uint64(DefaultBlockSizeBytes)
	want := uint64(streamHeaderBytes+len("s1")) + uint64(changed)*(recordHeaderBytes+bs) + streamTrailerBytes
	if stream.BlockCount() != changed || stream.Len() != want {
		t.Fatalf("%d blocks, %d bytes; want %d blocks, %d bytes", stream.BlockCount(), stream.Len(), changed, want)
	}
	shipped, err := io.Copy(io.Discard, stream)
	mustDo(t, err)
	if uint64(shipped) != want {
		t.Fatalf("the encoding is %d bytes, Len says %d", shipped, want)
	}
	t.Logf("1%% of a 64 MiB volume changed: %d changed bytes ship as %d bytes", uint64(changed)*bs, shipped)
}

// filledVolume is a pool with volume "v" of sizeBytes, every block written,
// and the number of blocks that make 1% of it.
func filledVolume(tb testing.TB, sizeBytes uint64) (*Pool, int) {
	p := New(Options{SizeBytes: 4 * sizeBytes, Seed: 1})
	if err := p.CreateVolume("v", sizeBytes, backend.Thin); err != nil {
		tb.Fatal(err)
	}
	dev, err := p.Open("v")
	if err != nil {
		tb.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{1}, mib)
	for offset := uint64(0); offset < sizeBytes; offset += mib {
		if _, err := dev.WriteAt(chunk, int64(offset)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := dev.Close(); err != nil {
		tb.Fatal(err)
	}
	return p, int(sizeBytes / DefaultBlockSizeBytes / 100)
}

// BenchmarkSnapshotAndIncrementalSend1GiB: one replication round of a fully
// written 1 GiB volume with 1% of its blocks changed: snapshot, send the
// delta and encode it for the wire. The writes and the retention (destroying
// the previous snapshot) run outside the timer.
func BenchmarkSnapshotAndIncrementalSend1GiB(b *testing.B) {
	p, changed := filledVolume(b, 1<<30)
	if err := p.Snapshot("v", "s0"); err != nil {
		b.Fatal(err)
	}
	names := []string{"a", "b"}
	var shipped int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		writeScattered(b, p, "v", changed, byte(i))
		previous, next := p.volumes["v"].latest().name, names[i%2]
		b.StartTimer()
		if err := p.Snapshot("v", next); err != nil {
			b.Fatal(err)
		}
		stream, err := p.Send("v", previous, next)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, stream)
		if err != nil {
			b.Fatal(err)
		}
		shipped = n
		b.StopTimer()
		if err := p.DestroySnapshot("v", previous); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(shipped), "shipped-bytes/op")
	b.ReportMetric(float64(changed*DefaultBlockSizeBytes), "changed-bytes/op")
}

// BenchmarkReceiveDelta1GiB: applying that delta on a replica, through the
// byte encoding and through the sim's fast path.
func BenchmarkReceiveDelta1GiB(b *testing.B) {
	for _, encoded := range []bool{true, false} {
		name := "fast-path"
		if encoded {
			name = "encoded"
		}
		b.Run(name, func(b *testing.B) {
			a, changed := filledVolume(b, 1<<30)
			if err := a.Snapshot("v", "s0"); err != nil {
				b.Fatal(err)
			}
			writeScattered(b, a, "v", changed, 2)
			if err := a.Snapshot("v", "s1"); err != nil {
				b.Fatal(err)
			}
			full, _ := a.Send("v", "", "s0")
			delta, _ := a.Send("v", "s0", "s1")
			wire, _ := io.ReadAll(delta)
			replica := New(Options{SizeBytes: 4 << 30, Seed: 2})
			if err := replica.Receive("r", full); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var r io.Reader = bytes.NewReader(wire)
				if !encoded {
					s, _ := a.Send("v", "s0", "s1")
					r = s
				}
				if err := replica.Receive("r", r); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := replica.DestroySnapshot("r", "s1"); err != nil {
					b.Fatal(err)
				}
				if err := replica.Rollback("r", "s0"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkThinTerabyteVolume: the memory of a 1 TiB thin volume with 10 MiB
// written block by block (B/op is the figure).
func BenchmarkThinTerabyteVolume(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p := New(Options{SizeBytes: 2 * tib, Seed: 1})
		if err := p.CreateVolume("big", tib, backend.Thin); err != nil {
			b.Fatal(err)
		}
		writeScattered(b, p, "big", 10*mib/DefaultBlockSizeBytes, 1)
	}
}
