package bed

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/workload"
)

// Violation is a broken invariant, as a bed records it.
type Violation struct {
	Invariant, Message string
}

// MoveLosses holds the volume invariant of a move of app, the same on every
// bed: a planned move loses no acknowledged write; an unplanned one loses
// only writes acknowledged after the snapshot its new member was cloned from
// was ordered (the recovery point). origin finds that time for volume i of
// the verdict; an error there leaves the volume unchecked, and is returned
// for the bed to say so. at renders a time the way the bed's reports do.
func MoveLosses(app string, verdict workload.Verdict, planned bool,
	origin func(i int) (time.Time, error), at func(time.Time) string) (broken []Violation, unchecked []error) {
	for i, v := range verdict.Volumes {
		if v.Lost.Acknowledged == 0 {
			continue
		}
		if planned {
			broken = append(broken, Violation{"volume: planned move lost acknowledged writes", fmt.Sprintf(
				"relocating %s lost %d acknowledged writes of %s, the oldest acknowledged %s before the move",
				app, v.Lost.Acknowledged, v.Volume, v.Lost.RPO)})
			continue
		}
		taken, err := origin(i)
		switch {
		case err != nil:
			unchecked = append(unchecked, fmt.Errorf("the loss of %s's %s is not checked against its origin: %w", app, v.Volume, err))
		case v.Lost.Oldest.Before(taken):
			broken = append(broken, Violation{"volume: lost a write the last sync carried", fmt.Sprintf(
				"fail-over of %s lost a write to %s acknowledged at %s, before the snapshot it was cloned from was ordered (%s)",
				app, v.Volume, at(v.Lost.Oldest), at(taken))})
		}
	}
	return broken, unchecked
}
