package webapps

import (
	"fmt"
	"time"
)

// Judge compares what a read-back found (obs) with the operations the
// journal recorded, volume by volume, and returns the verdict. recoveryPoint
// is the fail-over's recovery point, zero when unknown. It is pure: the
// read-backs gather, Judge decides.
func Judge(app string, volumes []string, writes []Write, obs *Observation, recoveryPoint, now time.Time) Verdict {
	v := Verdict{App: app, At: now, RecoveryPoint: recoveryPoint}
	for _, volume := range volumes {
		vol := judgeVolume(volume, writes, obs, recoveryPoint)
		v.LossWindow = max(v.LossWindow, vol.LossWindow)
		v.Volumes = append(v.Volumes, vol)
	}
	return v
}

// onVolume is one write's part on the volume being judged.
type onVolume struct {
	write Write
	part  Part
}

func partsOn(volume string, writes []Write) []onVolume {
	var out []onVolume
	for _, w := range writes {
		for _, p := range w.Parts {
			if p.Volume == volume {
				out = append(out, onVolume{w, p})
			}
		}
	}
	return out
}

func judgeVolume(volume string, writes []Write, obs *Observation, recoveryPoint time.Time) VolumeResult {
	vol := VolumeResult{Volume: volume}
	parts := partsOn(volume, writes)
	written := map[string]bool{}
	for _, p := range parts {
		written[p.write.Key] = true
		if _, ok := obs.Lookup(volume, p.write.Key); ok && !p.part.Discarded && p.write.Seq > vol.Newest.Seq {
			vol.Newest = p.write
		}
	}
	for _, p := range parts {
		vol.BytesWritten += p.part.Bytes
		classify(&vol, p, obs, recoveryPoint)
	}
	for _, key := range obs.Keys(volume) {
		if !written[key] {
			vol.Unexpected = append(vol.Unexpected, key)
		}
	}
	for _, key := range obs.Duplicates(volume) {
		vol.Unexpected = append(vol.Unexpected, key+" (twice)")
	}
	vol.LossWindow = lossWindow(vol, parts, recoveryPoint)
	if vol.Intact+vol.UnacknowledgedPresent+len(vol.Corrupt)+len(vol.Missing) > len(parts) ||
		vol.Intact+vol.UnacknowledgedPresent+len(vol.Corrupt) > len(obs.Keys(volume)) {
		panic(fmt.Sprintf("webapps: volume %s: judged more writes present than the read-back found", volume))
	}
	return vol
}

// classify puts one part into the volume's result.
func classify(vol *VolumeResult, p onVolume, obs *Observation, recoveryPoint time.Time) {
	w := p.write
	found, ok := obs.Lookup(vol.Volume, w.Key)
	if !ok {
		vol.Missing = append(vol.Missing, w.Seq)
	}
	switch {
	case p.part.Discarded && ok:
		vol.Unexpected = append(vol.Unexpected, w.Key+" (lost in a fail-over, yet back)")
	case p.part.Discarded:
	case ok && found.SHA256 != p.part.SHA256:
		vol.Corrupt = append(vol.Corrupt, Mismatch{Seq: w.Seq, Key: w.Key, Expected: p.part.SHA256, Found: found.SHA256})
	case ok && w.Outcome == Refused:
		vol.Unexpected = append(vol.Unexpected, w.Key+" (refused, yet written)")
	case ok && w.Outcome == Acknowledged:
		vol.Intact++
	case ok:
		vol.UnacknowledgedPresent++
	case w.Outcome == Acknowledged:
		loss := Loss{Seq: w.Seq, Key: w.Key, Acknowledged: w.Answered,
			BeforeRecoveryPoint: !recoveryPoint.IsZero() && w.Answered.Before(recoveryPoint)}
		vol.Lost = append(vol.Lost, loss)
		vol.LostBytes += p.part.Bytes
		if w.Seq < vol.Newest.Seq {
			vol.Holes = append(vol.Holes, loss)
		}
	case w.Outcome != Refused:
		vol.UnacknowledgedLost++
	}
}

// lossWindow is the volume's loss window: from the recovery point -- or, unknown,
// the newest surviving write's answer, or the first write's issue when none
// survived -- to the newest lost acknowledged write's acknowledgement.
func lossWindow(vol VolumeResult, parts []onVolume, recoveryPoint time.Time) time.Duration {
	if len(vol.Lost) == 0 {
		return 0
	}
	from := recoveryPoint
	switch {
	case !from.IsZero():
	case vol.Newest.Seq != 0:
		from = vol.Newest.Answered
		if from.IsZero() {
			from = vol.Newest.Issued
		}
	default:
		from = parts[0].write.Issued
	}
	newest := vol.Lost[len(vol.Lost)-1].Acknowledged
	if d := newest.Sub(from); d > 0 {
		return d
	}
	return 0
}
