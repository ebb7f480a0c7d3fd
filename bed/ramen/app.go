package ramen

import "time"

// Wish is what the hub asks of one site's VolumeReplications for an
// application.
type Wish struct {
	State      State
	AutoResync bool
}

// App is one application as Ramen protects it: what the hub wishes of each
// site, and the VolumeReplications each site keeps for its volumes.
type App struct {
	Name string
	// Handles are the CSI handles of the application's volumes, in volume
	// order.
	Handles []string
	// Tail is the instance of the application left writing on a site the
	// hub could not reach at an unplanned fail-over; nil once the hub
	// reached that site and deleted its pod, or the bed stopped it.
	Tail *Tail
	// vrs are each site's VolumeReplications, in volume order, made when
	// the site first hears a wish; wishes wait until the hub reaches a site.
	vrs    map[string][]*VR
	wishes map[string]Wish
}

// VRs are the site's VolumeReplications of the application, in volume order.
func (a *App) VRs(site string) []*VR { return a.vrs[site] }

// deliver applies the hub's wish to a site it reaches: the site's VRs (made
// on the first wish) want what the hub wants of them, due at once. It
// returns the VRs whose wish changed.
func (a *App) deliver(site string, now time.Time) (changed []*VR) {
	want, ok := a.wishes[site]
	if !ok {
		return nil
	}
	if len(a.vrs[site]) == 0 {
		for _, handle := range a.Handles {
			a.vrs[site] = append(a.vrs[site], &VR{Handle: handle, Site: site})
		}
	}
	for _, vr := range a.vrs[site] {
		if vr.Wants != want.State || vr.AutoResync != want.AutoResync {
			vr.Want(want.State, want.AutoResync)
			vr.Due = now
			changed = append(changed, vr)
		}
	}
	return changed
}

// reached reports whether every VR of the site wants what the hub wishes of
// it -- the wish reached the site -- and got there.
func (a *App) reached(site string) bool {
	want := a.wishes[site]
	vrs := a.vrs[site]
	for _, vr := range vrs {
		if vr.Wants != want.State || vr.AutoResync != want.AutoResync || !vr.Done() {
			return false
		}
	}
	return len(vrs) == len(a.Handles)
}

// protected reports whether the application is primary on site -- the
// wish Protect made reached it -- and every volume shipped a first snapshot.
func (a *App) protected(site string) bool {
	for _, vr := range a.vrs[site] {
		if vr.Info == nil || vr.Info.GetLastSyncTime() == nil {
			return false
		}
	}
	return a.reached(site)
}

// lastError is the last error a call of the application's VRs met, looked
// at in the order of sites.
func (a *App) lastError(sites []string) string {
	last := "no call failed"
	for _, site := range sites {
		for _, vr := range a.vrs[site] {
			if vr.LastError != "" {
				last = vr.LastError
			}
		}
	}
	return last
}
