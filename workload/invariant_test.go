package workload

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Each application invariant is shown to catch its violation twice: on a
// damaged device (where the crash-consistency check fires too), and on a
// crash-consistent prefix of a model whose write order is wrong, which only
// the application's invariant can catch.

func TestRefToMissingObjectIsDangling(t *testing.T) {
	w := NewGitea("gitea", pcg(10), smallLayouts()...)
	s := newSite(w)
	now := run(t, w, s, epoch, 40)
	tip := w.repository.tips[0]
	if tip.isZero() {
		t.Fatal("ref a/main was never pushed")
	}
	missing := int64(w.repository.objectBlock(tip.start, 0))
	damaged := s.withBlock(GiteaRepositories, missing, make([]byte, BlockSizeBytes))
	vv := volumeVerdict(t, w.Verify(damaged, now), GiteaRepositories)
	got := findViolation(vv, DanglingRef, uint64(missing))
	if got == nil || !strings.Contains(got.Expected, "commit "+tip.short()) || got.Found != "zeros" {
		t.Fatalf("no dangling-ref violation for commit %s at block %d:\n%v", tip.short(), missing, vv.Violations)
	}
}

func TestFileWithAnOlderDataBlockIsIncomplete(t *testing.T) {
	w := NewWordPress("wordpress", pcg(12), smallLayouts()...)
	s := recordingSite(w)
	now := run(t, w, s, epoch, 80)
	h := w.uploads.h
	// A live file's data block whose previous write was an evicted file's.
	var block uint64
	var entry fileEntry
	for _, slot := range w.uploads.live {
		e := w.uploads.slots[slot]
		for part := range e.blocks {
			b := w.uploads.dataBlock(e.start, part)
			if h.writes[h.last[b]].prev >= 0 {
				block, entry = b, e
			}
		}
	}
	if entry.id == 0 {
		t.Fatal("no live file reuses a block: the ring did not wrap")
	}
	older := s[WordPressUploads].Log()[h.writes[h.last[block]].prev]
	damaged := s.withBlock(WordPressUploads, int64(block), older.Data)
	vv := volumeVerdict(t, w.Verify(damaged, now), WordPressUploads)
	got := findViolation(vv, FileIncomplete, block)
	if got == nil || !strings.Contains(got.Expected, fmt.Sprintf("of file %d ", entry.id)) {
		t.Fatalf("no file-incomplete violation for file %d at block %d:\n%v", entry.id, block, vv.Violations)
	}
}

func TestCommittedTransactionMissingFromTheLogIsLost(t *testing.T) {
	w := NewWordPress("wordpress", pcg(14), smallLayouts()...)
	s := newSite(w)
	now := run(t, w, s, epoch, 50)
	// Not the last transaction: a device missing only the last write holds a
	// prefix in which that transaction never committed.
	txn := w.db.txns[len(w.db.txns)-2]
	commit := w.db.h.writes[txn.commit]
	damaged := s.withBlock(WordPressDatabase, int64(commit.block), make([]byte, BlockSizeBytes))
	vv := volumeVerdict(t, w.Verify(damaged, now), WordPressDatabase)
	got := findViolation(vv, TransactionLost, commit.block)
	if got == nil || !strings.Contains(got.Expected, fmt.Sprintf("txn %d,", txn.txid)) {
		t.Fatalf("no transaction-lost violation for txn %d at block %d:\n%v", txn.txid, commit.block, vv.Violations)
	}
}

// A model that writes a block before what it names (a bug each model can be
// made to have) leaves, at the crash point between the two, a prefix Verify
// finds wrong in that model's own words, and in no other.
func TestAWriteDurableBeforeWhatItNamesIsFound(t *testing.T) {
	for _, c := range []struct {
		name        string
		misordered  func() (Workload, string)
		first, then BlockKind
		want        ViolationKind
		steps       int
	}{
		{"refs before their objects", func() (Workload, string) {
			w := NewGitea("gitea", pcg(11), smallLayouts()...)
			w.repository.misorderPush = true
			return w, GiteaRepositories
		}, KindRefs, KindObject, DanglingRef, 20},
		{"a directory entry before its data", func() (Workload, string) {
			w := NewWordPress("wordpress", pcg(13), smallLayouts()...)
			w.uploads.misorderUpload = true
			return w, WordPressUploads
		}, KindDirectory, KindFileData, FileIncomplete, 30},
		{"the checkpoint pointer before the pages", func() (Workload, string) {
			w := NewWordPress("wordpress", pcg(15), smallLayouts()...)
			w.db.misorderCheckpoint = true
			return w, WordPressDatabase
		}, KindDatabaseControl, KindDatabasePage, TransactionLost, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, volume := c.misordered()
			s := recordingSite(w)
			now := run(t, w, s, epoch, c.steps)
			vv := prefixAfter(t, w, s, volume, c.first, c.then, now)
			if k := kinds(vv); k[c.want] == 0 || k[Torn]+k[UnknownWrite]+k[Foreign]+k[Checksum] != 0 {
				t.Fatalf("want %s violations and no others: %v", c.want, vv.Violations)
			}
		})
	}
}

// prefixAfter verifies a volume holding the prefix that ends with the first
// write of kind first followed by one of kind then: the crash point a
// misordered model exposes.
func prefixAfter(t *testing.T, w Workload, s site, volume string, first, then BlockKind, now time.Time) VolumeVerdict {
	t.Helper()
	h := historyOf(t, w, volume)
	for i := 0; i+1 < len(h.writes); i++ {
		if h.writes[i].kind != first || h.writes[i+1].kind != then {
			continue
		}
		devices := s.devices()
		devices[volume] = replay(s[volume].Log(), i+1, specOf(t, w, volume).SizeBytes)
		vv := volumeVerdict(t, w.Verify(devices, now), volume)
		if vv.Prefix.Writes != i+1 {
			t.Fatalf("prefix of %d writes verified as %d", i+1, vv.Prefix.Writes)
		}
		return vv
	}
	t.Fatalf("no %s write followed by a %s write", first, then)
	return VolumeVerdict{}
}
