package webapps

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/workload"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// journalOf builds a journal of n single-part writes to volume "db", one a
// second; outcomes[i] is write i+1's (Acknowledged when short).
func journalOf(n int, outcomes map[int]Outcome) *Journal {
	j := NewJournal()
	for i := 1; i <= n; i++ {
		key := keys{prefix: "baton-t-00000000-"}.key(uint64(i))
		seq := j.Begin(Write{Key: key, Operation: OpPost, Issued: t0.Add(time.Duration(i) * time.Second),
			Parts: []Part{{Volume: "db", SHA256: sha256Hex([]byte(key)), Bytes: 100}}})
		o, ok := outcomes[i]
		if !ok {
			o = Acknowledged
		}
		j.Finish(seq, o, t0.Add(time.Duration(i)*time.Second+100*time.Millisecond), "", "")
	}
	return j
}

// observe finds writes present (by number) with their content, and extra
// keys with made-up content.
func observe(j *Journal, present []int, corrupt map[int]bool, extra ...string) *Observation {
	obs := NewObservation()
	writes := j.Writes()
	for _, i := range present {
		w := writes[i-1]
		sum := w.Parts[0].SHA256
		if corrupt[i] {
			sum = sha256Hex([]byte("something else"))
		}
		obs.Add("db", w.Key, sum, "")
	}
	for _, k := range extra {
		obs.Add("db", k, "00", "")
	}
	return obs
}

func TestJudgeClassifiesEveryWrite(t *testing.T) {
	rp := t0.Add(6*time.Second + 500*time.Millisecond) // writes 1-6 acknowledged before it
	tests := []struct {
		name       string
		outcomes   map[int]Outcome
		present    []int
		corrupt    map[int]bool
		extra      []string
		recovery   time.Time
		planned    bool
		intact     int
		lost       int
		before     int
		unackHere  int
		unackLost  int
		lossWindow time.Duration
		failures   []string // substrings, one per failure, in order
	}{
		{name: "all there", present: []int{1, 2, 3, 4, 5, 6, 7, 8}, recovery: rp, intact: 8},
		{name: "tail after the recovery point lost", present: []int{1, 2, 3, 4, 5, 6}, recovery: rp,
			intact: 6, lost: 2, lossWindow: 1600 * time.Millisecond},
		{name: "a write before the recovery point lost", present: []int{1, 2, 3, 4, 5}, recovery: rp,
			intact: 5, lost: 3, before: 1, lossWindow: 1600 * time.Millisecond,
			failures: []string{"lost write #6 baton-t-00000000-000006"}},
		{name: "planned move loses nothing", present: []int{1, 2, 3, 4, 5, 6, 7}, planned: true,
			intact: 7, lost: 1, lossWindow: 1000 * time.Millisecond, failures: []string{"planned move lost acknowledged write #8"}},
		{name: "unknown outcomes either way", outcomes: map[int]Outcome{7: Unknown, 8: Unknown},
			present: []int{1, 2, 3, 4, 5, 6, 7}, recovery: rp, intact: 6, unackHere: 1, unackLost: 1},
		{name: "refused and absent is fine", outcomes: map[int]Outcome{8: Refused},
			present: []int{1, 2, 3, 4, 5, 6, 7}, recovery: rp, intact: 7},
		{name: "refused yet present", outcomes: map[int]Outcome{8: Refused},
			present: []int{1, 2, 3, 4, 5, 6, 7, 8}, recovery: rp, intact: 7, failures: []string{"refused, yet written"}},
		{name: "corrupt", present: []int{1, 2, 3, 4, 5, 6, 7, 8}, corrupt: map[int]bool{3: true}, recovery: rp,
			intact: 7, failures: []string{"write #3 baton-t-00000000-000003 reads back as"}},
		{name: "a hole", present: []int{1, 2, 4, 5, 6, 7, 8}, recovery: t0, intact: 7, lost: 1,
			lossWindow: 3100 * time.Millisecond, failures: []string{"write #3 baton-t-00000000-000003 is missing but a later write survived"}},
		{name: "a write nobody made", present: []int{1, 2, 3, 4, 5, 6, 7, 8}, extra: []string{"baton-t-00000000-000099"},
			recovery: rp, intact: 8, failures: []string{"found baton-t-00000000-000099"}},
		{name: "no recovery point: measured from the newest survivor", present: []int{1, 2, 3, 4, 5},
			intact: 5, lost: 3, lossWindow: 3 * time.Second},
		{name: "nothing survived", present: nil, recovery: rp, intact: 0, lost: 8, before: 6, lossWindow: 1600 * time.Millisecond,
			failures: []string{"#1 ", "#2 ", "#3 ", "#4 ", "#5 ", "#6 "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := journalOf(8, tt.outcomes)
			v := Judge("wp", []string{"db"}, j.Writes(), observe(j, tt.present, tt.corrupt, tt.extra...), tt.recovery, t0.Add(time.Minute))
			vol := v.Volumes[0]
			if vol.Intact != tt.intact || len(vol.Lost) != tt.lost || vol.lostBefore() != tt.before ||
				vol.UnacknowledgedPresent != tt.unackHere || vol.UnacknowledgedLost != tt.unackLost {
				t.Fatalf("intact %d lost %d (before %d) unack %d/%d; want %d %d (%d) %d/%d\n%s", vol.Intact, len(vol.Lost),
					vol.lostBefore(), vol.UnacknowledgedPresent, vol.UnacknowledgedLost,
					tt.intact, tt.lost, tt.before, tt.unackHere, tt.unackLost, v)
			}
			if v.LossWindow != tt.lossWindow {
				t.Errorf("loss window %s, want %s", v.LossWindow, tt.lossWindow)
			}
			failures := v.Failures(tt.planned)
			if len(failures) != len(tt.failures) {
				t.Fatalf("failures %q, want %d like %q", failures, len(tt.failures), tt.failures)
			}
			for i, f := range failures {
				if !strings.Contains(f, tt.failures[i]) {
					t.Errorf("failure %d: %q lacks %q", i, f, tt.failures[i])
				}
			}
		})
	}
}

func TestJudgeDuplicateIsUnexpected(t *testing.T) {
	j := journalOf(2, nil)
	obs := observe(j, []int{1, 2, 2}, nil)
	v := Judge("wp", []string{"db"}, j.Writes(), obs, time.Time{}, t0)
	if got := v.Volumes[0].Unexpected; len(got) != 1 || !strings.HasSuffix(got[0], "(twice)") {
		t.Fatalf("unexpected %q, want the duplicate of write 2", got)
	}
}

func TestJudgeSplitsPartsByVolume(t *testing.T) {
	// A media upload whose row survived but whose file did not: the loss is
	// on the uploads volume alone.
	j := NewJournal()
	seq := j.Begin(Write{Key: "baton-t-00000000-000001", Operation: OpMedia, Issued: t0, Parts: []Part{
		{Volume: "db", SHA256: "aa", Bytes: 10}, {Volume: "uploads", SHA256: "bb", Bytes: 7000}}})
	j.Finish(seq, Acknowledged, t0.Add(time.Second), "1", "")
	obs := NewObservation()
	obs.Add("db", "baton-t-00000000-000001", "aa", "1")
	v := Judge("wp", []string{"db", "uploads"}, j.Writes(), obs, t0.Add(2*time.Second), t0.Add(time.Minute))
	if v.Volumes[0].Intact != 1 || len(v.Volumes[1].Lost) != 1 || v.Volumes[1].LostBytes != 7000 {
		t.Fatalf("want the row intact and the file lost:\n%s", v)
	}
	if f := v.Failures(false); len(f) != 1 || !strings.Contains(f[0], "uploads") {
		t.Fatalf("failures %q, want the file lost before the recovery point", f)
	}
}

func TestWorkloadVerdictFeedsMoveLosses(t *testing.T) {
	j := journalOf(8, nil)
	at := t0.Add(time.Minute)
	v := Judge("wp", []string{"db"}, j.Writes(), observe(j, []int{1, 2, 3, 4, 5}, map[int]bool{2: true}), time.Time{}, at)
	wv := v.Workload([]string{"db"})
	vv, ok := wv.Volume("db")
	if !ok {
		t.Fatal("no db volume in the converted verdict")
	}
	if vv.Lost.Acknowledged != 3 || vv.Prefix.Writes != 5 || vv.Prefix.Seq != 5 || vv.BytesWritten != 800 {
		t.Fatalf("converted %+v", vv)
	}
	if want := t0.Add(6*time.Second + 100*time.Millisecond); !vv.Lost.Oldest.Equal(want) || vv.Lost.Age != at.Sub(want) {
		t.Fatalf("oldest lost %s (loss age %s), want %s", vv.Lost.Oldest, vv.Lost.Age, want)
	}
	if vv.Consistent() || vv.Violations[0].Kind != workload.Checksum || vv.Violations[0].Block != 2 {
		t.Fatalf("want write 2's corruption as a checksum violation: %v", vv.Violations)
	}
	// The snapshot was ordered after write 6 was acknowledged: losing it
	// breaks the move-loss invariant, exactly as on the other beds.
	broken := bed.MoveLosses("wp", wv, false,
		func(int) (time.Time, error) { return t0.Add(6500 * time.Millisecond), nil }, func(t time.Time) string { return t.String() })
	if len(broken) != 1 || broken[0].Invariant != bed.InvariantLostSynced {
		t.Fatalf("MoveLosses: broken %v, want one lost synced write", broken)
	}
}

func TestUnavailableConvertsToUnreadable(t *testing.T) {
	v := Verdict{App: "wp", At: t0, Unavailable: "HTTP 500 for 5m0s"}
	wv := v.Workload([]string{"db", "uploads"})
	if len(wv.Volumes) != 2 || wv.Consistent() || wv.Volumes[1].Violations[0].Kind != workload.Unreadable {
		t.Fatalf("converted %+v", wv)
	}
	if f := v.Failures(false); len(f) != 1 || !strings.Contains(f[0], "did not come back") {
		t.Fatalf("failures %q", f)
	}
}

func TestJournalRefusesReusedKey(t *testing.T) {
	j := journalOf(1, nil)
	defer func() {
		if recover() == nil {
			t.Fatal("a reused key was accepted")
		}
	}()
	j.Begin(Write{Key: j.Writes()[0].Key, Parts: []Part{{Volume: "db"}}})
}

func TestResumeDiscardsWhatAFailoverLost(t *testing.T) {
	j := journalOf(8, map[int]Outcome{8: Unknown})
	rp := t0.Add(6*time.Second + 500*time.Millisecond)
	v := Judge("wp", []string{"db"}, j.Writes(), observe(j, []int{1, 2, 3, 4, 5, 6}, nil), rp, t0.Add(time.Minute))
	if f := v.Failures(false); len(f) != 0 || len(v.Volumes[0].Lost) != 1 {
		t.Fatalf("fail-over verdict: %s %q", v, f)
	}
	if err := j.Resume(v); err != nil {
		t.Fatal(err)
	}
	// The application goes on on the copy: writes 9 and 10 land, 7 and 8
	// stay gone, and nothing is lost any more.
	for i := 9; i <= 10; i++ {
		key := keys{prefix: "baton-t-00000000-"}.key(uint64(i))
		seq := j.Begin(Write{Key: key, Issued: t0.Add(time.Duration(i) * time.Second),
			Parts: []Part{{Volume: "db", SHA256: sha256Hex([]byte(key)), Bytes: 100}}})
		j.Finish(seq, Acknowledged, t0.Add(time.Duration(i)*time.Second), "", "")
	}
	after := Judge("wp", []string{"db"}, j.Writes(), observe(j, []int{1, 2, 3, 4, 5, 6, 9, 10}, nil), time.Time{}, t0.Add(2*time.Minute))
	if f := after.Failures(true); len(f) != 0 || after.Volumes[0].Intact != 8 {
		t.Fatalf("after resuming: %s %q", after, f)
	}
	// Write 7, lost in the fail-over, comes back (the old site's tail):
	// that is a violation, not a recovery.
	back := Judge("wp", []string{"db"}, j.Writes(), observe(j, []int{1, 2, 3, 4, 5, 6, 7, 9, 10}, nil), time.Time{}, t0.Add(2*time.Minute))
	if f := back.Failures(false); len(f) != 1 || !strings.Contains(f[0], "lost in a fail-over, yet back") {
		t.Fatalf("a discarded write back: %q", f)
	}
	if err := j.Resume(Verdict{Unavailable: "down"}); err == nil {
		t.Fatal("resumed from a verdict that read nothing")
	}
}
