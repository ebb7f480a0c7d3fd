package workload_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/baton-dr/baton/workload"
	"github.com/baton-dr/baton/workload/workloadtest"
)

// TestChangesBetweenSplitsTheHistoryByTime checks that the changes of
// consecutive windows add up to the whole history's writes, and that a window
// holds exactly the steps inside it.
func TestChangesBetweenSplitsTheHistoryByTime(t *testing.T) {
	w := workload.NewWordPress("wp", rand.New(rand.NewPCG(1, 2)))
	devices := workload.Devices{}
	for _, v := range w.Volumes() {
		devices[v.Name] = workloadtest.NewDevice(int64(v.SizeBytes))
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	writesAt := map[int]int{}
	for i := 1; i <= 40; i++ {
		before, _ := w.Changes("db", 0)
		if _, err := w.Step(epoch.Add(time.Duration(i)*time.Second), devices); err != nil {
			t.Fatal(err)
		}
		after, _ := w.Changes("db", 0)
		writesAt[i] = after.Writes - before.Writes
	}
	total, _ := w.Changes("db", 0)
	first, _ := w.ChangesBetween("db", time.Time{}, epoch.Add(20*time.Second))
	second, _ := w.ChangesBetween("db", epoch.Add(20*time.Second), epoch.Add(40*time.Second))
	if first.Writes+second.Writes != total.Writes {
		t.Fatalf("windows hold %d + %d writes, the history %d", first.Writes, second.Writes, total.Writes)
	}
	one, _ := w.ChangesBetween("db", epoch.Add(6*time.Second), epoch.Add(7*time.Second))
	if one.Writes != writesAt[7] {
		t.Fatalf("the window (6 s, 7 s] holds %d writes, step 7 issued %d", one.Writes, writesAt[7])
	}
	if _, err := w.ChangesBetween("nope", epoch, epoch); err == nil {
		t.Fatal("an unknown volume was accepted")
	}
}
