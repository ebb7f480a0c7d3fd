package webapps

import (
	"fmt"
	"strings"
	"time"
)

// Verdict is what a read-back found, judged against the journal.
type Verdict struct {
	App string
	At  time.Time // when the read-back ran
	// RecoveryPoint is the fail-over's recovery point: when the snapshot the
	// new site started from was taken. Zero when unknown (a relocate, a
	// restart): the losses are then not split by it.
	RecoveryPoint time.Time
	// Unavailable, when not empty, says why the application could not be read
	// back at all (it did not answer, or answered 5xx, for longer than the
	// limit): nothing else was judged.
	Unavailable string
	Volumes     []VolumeResult // in the application's volume order
	// LossWindow is the span of acknowledged writes the step lost: from the
	// recovery point (or, when unknown, from the newest write that survived
	// on the volume) to the newest acknowledged write lost, the largest over
	// the volumes; zero when nothing acknowledged was lost. It is not the
	// RPO, which runs from the failure back to the recovery point
	// (workload.VolumeVerdict.RPO of the converted verdict, Workload).
	LossWindow time.Duration
}

// VolumeResult is the verdict on what one volume's operations left.
type VolumeResult struct {
	Volume                string
	Intact                int // acknowledged writes found with their content
	UnacknowledgedPresent int // unknown-outcome writes that did happen
	UnacknowledgedLost    int // unknown-outcome writes that did not (allowed)
	Lost                  []Loss
	Corrupt               []Mismatch
	// Unexpected are keys found that no operation wrote, or that the
	// application refused, or found more than once.
	Unexpected []string
	// Holes are acknowledged writes missing while a later write to the same
	// volume survived: no crash-consistent copy of the volume looks so.
	Holes []Loss
	// Missing are the sequence numbers of every write, acknowledged or not,
	// not found on the volume: what Journal.Resume discards.
	Missing []uint64
	// Newest is the newest write found on the volume; zero Seq when none.
	Newest       Write
	BytesWritten int           // by every operation issued to the volume
	LostBytes    int           // by the acknowledged writes lost
	LossWindow   time.Duration // the volume's part of Verdict.LossWindow
}

// Loss is an acknowledged write that the read-back did not find.
type Loss struct {
	Seq          uint64
	Key          string
	Acknowledged time.Time
	// BeforeRecoveryPoint: acknowledged before the recovery point, so the
	// copy the application restarted from must hold it: a failure.
	BeforeRecoveryPoint bool
}

// Mismatch is a write found with content other than what was written.
type Mismatch struct {
	Seq             uint64
	Key             string
	Expected, Found string // hex SHA-256
}

// Failures are the reasons the verdict fails the step, one sentence each;
// none when every acknowledged write the step had to keep is there, intact.
// A planned step (planned) must lose no acknowledged write at all.
func (v Verdict) Failures(planned bool) []string {
	if v.Unavailable != "" {
		return []string{fmt.Sprintf("%s did not come back: %s", v.App, v.Unavailable)}
	}
	var out []string
	for _, vol := range v.Volumes {
		for _, l := range vol.Lost {
			switch {
			case planned:
				out = append(out, fmt.Sprintf("%s %s: planned move lost acknowledged write #%d %s (acknowledged %s)",
					v.App, vol.Volume, l.Seq, l.Key, stamp(l.Acknowledged)))
			case l.BeforeRecoveryPoint:
				out = append(out, fmt.Sprintf("%s %s: lost write #%d %s, acknowledged %s, before the recovery point %s",
					v.App, vol.Volume, l.Seq, l.Key, stamp(l.Acknowledged), stamp(v.RecoveryPoint)))
			}
		}
		for _, m := range vol.Corrupt {
			out = append(out, fmt.Sprintf("%s %s: write #%d %s reads back as sha256 %.12s, written as %.12s",
				v.App, vol.Volume, m.Seq, m.Key, m.Found, m.Expected))
		}
		for _, k := range vol.Unexpected {
			out = append(out, fmt.Sprintf("%s %s: found %s, which no operation wrote once", v.App, vol.Volume, k))
		}
		for _, h := range vol.Holes {
			out = append(out, fmt.Sprintf("%s %s: write #%d %s is missing but a later write survived", v.App, vol.Volume, h.Seq, h.Key))
		}
	}
	return out
}

// LostAcknowledged is the number of acknowledged writes lost on all volumes.
func (v Verdict) LostAcknowledged() int {
	n := 0
	for _, vol := range v.Volumes {
		n += len(vol.Lost)
	}
	return n
}

// String reports the verdict, one line per volume.
func (v Verdict) String() string {
	var b strings.Builder
	if v.Unavailable != "" {
		fmt.Fprintf(&b, "%s at %s: UNAVAILABLE: %s\n", v.App, stamp(v.At), v.Unavailable)
		return b.String()
	}
	fmt.Fprintf(&b, "%s at %s: recovery point %s, loss window %s\n", v.App, stamp(v.At), stamp(v.RecoveryPoint), v.LossWindow)
	for _, vol := range v.Volumes {
		fmt.Fprintf(&b, "  %s: %d intact, %d lost (%d before the recovery point), %d corrupt, %d unexpected, %d holes; unacknowledged %d present, %d lost\n",
			vol.Volume, vol.Intact, len(vol.Lost), vol.lostBefore(), len(vol.Corrupt), len(vol.Unexpected), len(vol.Holes),
			vol.UnacknowledgedPresent, vol.UnacknowledgedLost)
	}
	return b.String()
}

func (vol VolumeResult) lostBefore() int {
	n := 0
	for _, l := range vol.Lost {
		if l.BeforeRecoveryPoint {
			n++
		}
	}
	return n
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "(unknown)"
	}
	return t.UTC().Format("15:04:05.000")
}
