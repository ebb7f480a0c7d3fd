package ramen

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/reports"
)

// Driver is Ramen's hub and each site's csi-addons controller over a bed's
// applications: the hub's wishes per application and site, delivered when
// the hub reaches the site, and the rounds in which the sites' controllers
// reconcile the VolumeReplications due. The bed supplies what differs
// between beds in the fields below; when and how a round's calls are made is
// the bed's too (Round hands it the VRs due).
type Driver struct {
	// Sites are the bed's sites, in the order rounds visit them.
	Sites []string
	// Reaches tells whether the hub can reach the site now, both ways.
	Reaches func(site string) bool
	// Until lets the bed's time pass until done holds or limit passed, with
	// rounds running; it reports whether done held.
	Until func(done func() bool, limit time.Duration) bool
	// Limit bounds a DR action: past it the action failed.
	Limit time.Duration
	// Event puts an entry on the bed's timeline; Violate records a broken
	// invariant.
	Event   func(site string, kind reports.EventKind, format string, args ...any)
	Violate func(invariant, message string)
	// TellWishes puts each VR's new wish on the timeline when it reaches
	// the site.
	TellWishes bool

	apps []*App
}

// Add registers an application with the CSI handles of its volumes, in
// volume order; rounds visit applications in the order they were added.
func (d *Driver) Add(name string, handles []string) *App {
	a := &App{Name: name, Handles: handles, vrs: map[string][]*VR{}, wishes: map[string]Wish{}}
	d.apps = append(d.apps, a)
	return a
}

// Round is one pass of the hub and the sites' controllers at now: for each
// application and each site the hub reaches, the hub deletes a tail left
// writing there and delivers its wish; then reconcile is handed each of the
// site's VRs due by now. Reconcile sets the VR's Due (at once, or when the
// bed's calls return); until then the bed must not run another round.
func (d *Driver) Round(now time.Time, reconcile func(site string, vr *VR)) {
	for _, a := range d.apps {
		for _, site := range d.Sites {
			if d.Reaches(site) {
				d.deliver(a, site, now)
			}
			for _, vr := range a.vrs[site] {
				if !now.Before(vr.Due) {
					reconcile(site, vr)
				}
			}
		}
	}
}

func (d *Driver) deliver(a *App, site string, now time.Time) {
	if t := a.Tail; t != nil && t.Site == site {
		if err := t.Stop(); err != nil {
			d.Violate("application: the old primary's pod does not stop", err.Error())
		}
		a.Tail = nil
		d.Event(site, reports.EventAction, "the hub deletes %s's pod on %s", a.Name, site)
	}
	for _, vr := range a.deliver(site, now) {
		if d.TellWishes {
			d.Event(site, reports.EventAction, "%s's VolumeReplication %s wants %s (autoResync %v)", a.Name, vr.Handle,
				vr.Wants, vr.AutoResync)
		}
	}
}

// Protect asks site for Primary VolumeReplications of the application and
// waits until every volume shipped a first snapshot.
func (d *Driver) Protect(a *App, site string) error {
	d.Event(site, reports.EventAction, "protect %s", a.Name)
	a.wishes[site] = Wish{State: Primary}
	if !d.Until(func() bool { return a.protected(site) }, d.Limit) {
		return fmt.Errorf("protect %s: no first sync within %s: %s", a.Name, d.Limit, a.lastError(d.Sites))
	}
	return nil
}

// PeerReady waits, as Ramen's DRPC does before it relocates, until the
// site the application is to move to is ready (its PeerReady condition):
// it turned what the hub wishes of it -- after an unplanned fail-over, the
// old primary demoted and resynced, its data protected. Ramen keeps
// reconciling that site's VRG as secondary from the moment the hub reaches
// it again while the application runs on, so the relocation waits with the
// application still running where it is. A site that never heard a wish
// (never protected there) is ready.
func (d *Driver) PeerReady(a *App, site string) error {
	if _, ok := a.wishes[site]; !ok {
		return nil
	}
	return d.await(a, site, "peer ready (demote and resync)")
}

// Relocate is the roles of Ramen's planned relocation, once the bed stopped
// the application and unstaged its volumes: the old site turns secondary
// and resyncs until its data is protected, then the target site is
// promoted.
func (d *Driver) Relocate(a *App, from, to string) error {
	a.wishes[from] = Wish{State: Secondary}
	if err := d.await(a, from, "demote and resync"); err != nil {
		return err
	}
	a.wishes[to] = Wish{State: Primary}
	return d.await(a, to, "promote")
}

// Failover is the roles of Ramen's unplanned fail-over: the target site is
// promoted (forced on FailedPrecondition) and the old site, if any, is made
// secondary with autoResync -- delivered only when the hub reaches it again,
// which is also when the hub deletes the tail, the instance the bed left
// writing there (nil if none).
func (d *Driver) Failover(a *App, from, to string, tail *Tail) error {
	if tail != nil {
		a.Tail = tail
	}
	if from != "" {
		a.wishes[from] = Wish{State: Secondary, AutoResync: true}
	}
	a.wishes[to] = Wish{State: Primary}
	return d.await(a, to, "promote")
}

// await lets time pass until the application's VRs on site reached what the
// hub wishes of them.
func (d *Driver) await(a *App, site, what string) error {
	if !d.Until(func() bool { return a.reached(site) }, d.Limit) {
		return fmt.Errorf("%s %s on %s: not done within %s: %s", what, a.Name, site, d.Limit, a.lastError(d.Sites))
	}
	return nil
}

// Unprotect is the roles of deleting the application's DR protection, as
// Ramen's VRG deletion deletes its VolumeReplications: every site that
// heard a wish wants its VRs deleted (replication disabled there), and it
// waits until each did.
func (d *Driver) Unprotect(a *App) error {
	d.Event("", reports.EventAction, "unprotect %s", a.Name)
	var heard []string
	for _, site := range d.Sites {
		if _, ok := a.wishes[site]; ok {
			a.wishes[site] = Wish{State: Deleted}
			heard = append(heard, site)
		}
	}
	for _, site := range heard {
		if err := d.await(a, site, "unprotect"); err != nil {
			return err
		}
	}
	return nil
}
