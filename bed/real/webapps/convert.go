package webapps

import (
	"time"

	"github.com/baton-dr/baton/workload"
)

// maxViolationsPerVolume bounds a converted verdict, as workload's own does.
const maxViolationsPerVolume = 32

// Workload converts the verdict to the bed's workload.Verdict, so a bed can
// return it from Failover, Relocate and Verify and judge it with
// bed.MoveLosses:
//
//   - Prefix: the newest write found on the volume (Seq is the operation's
//     sequence number, At when it was issued) and how many were found;
//   - Lost: the acknowledged writes lost; Oldest is when the oldest was
//     acknowledged and Age its age at the read-back (the loss age), as
//     workload defines it (Verdict.LossWindow, the span from the recovery
//     point to the newest loss, is this package's figure; the RPO is the
//     converted verdict's, from the failure); Unacknowledged, the
//     unknown-outcome writes that did not happen;
//   - Violations: corruption (Checksum), writes no operation made or made
//     twice (UnknownWrite), holes (Torn), and an application that did not
//     come back (Unreadable, on every volume). A Violation's Block is the
//     operation's sequence number.
//
// Losses before the recovery point are not violations here: bed.MoveLosses
// judges them from Lost.Oldest and the origin the bed knows, as on every bed.
func (v Verdict) Workload(volumes []string) workload.Verdict {
	out := workload.Verdict{Workload: v.App, At: v.At}
	if v.Unavailable != "" {
		for _, name := range volumes {
			out.Volumes = append(out.Volumes, workload.VolumeVerdict{Volume: name, Violations: []workload.Violation{{
				Volume: name, Kind: workload.Unreadable, Expected: "the application answering its API", Found: v.Unavailable,
			}}})
		}
		return out
	}
	for _, vol := range v.Volumes {
		out.Volumes = append(out.Volumes, vol.workload(v.At))
	}
	return out
}

func (vol VolumeResult) workload(at time.Time) workload.VolumeVerdict {
	vv := workload.VolumeVerdict{
		Volume:       vol.Volume,
		BytesWritten: uint64(vol.BytesWritten),
		Prefix: workload.Prefix{
			Seq:    vol.Newest.Seq,
			Writes: vol.Intact + vol.UnacknowledgedPresent + len(vol.Corrupt),
			At:     vol.Newest.Issued,
		},
		Lost: workload.LostWrites{
			Acknowledged:      len(vol.Lost),
			AcknowledgedBytes: uint64(vol.LostBytes),
			Unacknowledged:    vol.UnacknowledgedLost,
		},
	}
	for _, l := range vol.Lost {
		if vv.Lost.Oldest.IsZero() || l.Acknowledged.Before(vv.Lost.Oldest) {
			vv.Lost.Oldest = l.Acknowledged
		}
	}
	if !vv.Lost.Oldest.IsZero() {
		vv.Lost.Age = at.Sub(vv.Lost.Oldest)
	}
	add := func(kind workload.ViolationKind, seq uint64, expected, found string) {
		if len(vv.Violations) >= maxViolationsPerVolume {
			vv.Suppressed++
			return
		}
		vv.Violations = append(vv.Violations, workload.Violation{Volume: vol.Volume, Block: seq, Kind: kind, Expected: expected, Found: found})
	}
	for _, m := range vol.Corrupt {
		add(workload.Checksum, m.Seq, m.Key+" with sha256 "+m.Expected, "sha256 "+m.Found)
	}
	for _, k := range vol.Unexpected {
		add(workload.UnknownWrite, 0, "only the operations the driver made, each once", k)
	}
	for _, h := range vol.Holes {
		add(workload.Torn, h.Seq, h.Key+", older than a write that survived", "missing")
	}
	return vv
}
