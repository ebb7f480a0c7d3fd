package scenarios

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/baton-dr/baton/bed"
)

// replacing is what the replace story calls beyond bed.Bed.
const replacing = "replacing a site's operator under live volumes"

func usesReplacement(b bed.Bed) error {
	_, err := bed.Can[bed.ControlPlaneReplacer](b, replacing)
	return err
}

// ErrAdoption: replacing the control plane lost, moved or re-provisioned
// what the nodes ran.
var ErrAdoption = errors.New("adoption failed")

// adoptionLimit bounds the wait for the operator to adopt every volume.
const adoptionLimit = 10 * time.Minute

// replace stops the site's operator while the application writes, loses
// its store's DRBD values, starts it again, and checks that it adopted
// what the nodes run: every volume adopted, none created anew, the same
// ports, minors and node-ids, no resync, no acknowledged write lost.
func replace(s *Script) error {
	replacer, err := bed.Can[bed.ControlPlaneReplacer](s.Bed, replacing)
	if err != nil {
		return err
	}
	if err := deployAndProtect(s); err != nil {
		return err
	}
	site := s.App.Site
	before, err := replacer.Resources(site)
	if err != nil {
		return err
	}
	resyncs := replacer.Resyncs(site)
	away := s.about(time.Minute)
	if err := s.phase("stop "+site+"'s operator for "+away.String()+"; its store loses the DRBD values", func() error {
		replacer.CrashController(site)
		if err := s.Bed.Run(away); err != nil {
			return err
		}
		return replacer.ForgetResources(site)
	}); err != nil {
		return err
	}
	if err := s.phase("start the operator; the provisioner asks for the volumes again", func() error {
		replacer.RestartController(site)
		return provisionedNothingAnew(s, replacer, true)
	}); err != nil {
		return err
	}
	writing := s.about(2 * time.Minute)
	return s.phase("adopt while writing for "+writing.String(), func() error {
		if err := s.Bed.Run(writing); err != nil {
			return err
		}
		undecided, refused := replacer.Adoption(site)
		for waited := time.Duration(0); len(undecided) > 0 && waited < adoptionLimit; waited += 30 * time.Second {
			if err := s.Bed.Run(30 * time.Second); err != nil {
				return err
			}
			undecided, refused = replacer.Adoption(site)
		}
		if len(undecided) > 0 || len(refused) > 0 {
			return fmt.Errorf("%w: every volume adopted: undecided %v, refused %v", ErrAdoption, undecided, refused)
		}
		after, err := replacer.Resources(site)
		if err != nil {
			return err
		}
		if !maps.Equal(before, after) {
			return fmt.Errorf("%w: ports, minors and node-ids unchanged: before %v, after %v", ErrAdoption, before, after)
		}
		// A fault chaos injected may need a resync of its own.
		if ran := replacer.Resyncs(site) - resyncs; ran > 0 && len(s.injected) == 0 {
			return fmt.Errorf("%w: no resync ran: %d ran", ErrAdoption, ran)
		}
		if err := provisionedNothingAnew(s, replacer, false); err != nil {
			return err
		}
		_, err = s.verify(true)
		return err
	})
}

// provisionedNothingAnew asks for the application's volumes again: each
// answer is the volume the application holds, or -- while adoption may be
// undecided (window) -- a retryable refusal. Chaos's faults may fail a call
// otherwise; it is asked again, and must never answer another volume.
func provisionedNothingAnew(s *Script, replacer bed.ControlPlaneReplacer, window bool) error {
	for attempt := 0; ; attempt++ {
		answers, err := replacer.ProvisionAgain(s.App.Name)
		if err != nil {
			return err
		}
		var failed error
		for _, p := range answers {
			switch {
			case p.Err == nil && p.Answered != p.Held:
				return fmt.Errorf("%w: no volume created anew: CreateVolume of %s answered %s, the application holds %s",
					ErrAdoption, p.Volume, p.Answered, p.Held)
			case p.Err != nil && !(window && p.Retryable) && failed == nil:
				failed = fmt.Errorf("CreateVolume of %s: %w", p.Volume, p.Err)
			}
		}
		if failed == nil {
			return nil
		}
		if len(s.injected) == 0 || attempt >= 10 {
			return fmt.Errorf("%w: %w", ErrAdoption, failed)
		}
		if err := s.Bed.Run(30 * time.Second); err != nil {
			return err
		}
	}
}
