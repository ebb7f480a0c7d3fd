package replication

import "testing"

func TestAPairingFollowsItsCycle(t *testing.T) {
	legal := map[[2]Phase]bool{
		{Idle, Snapshotting}: true, {Snapshotting, Shipping}: true, {Shipping, Idle}: true, {Paused, Idle}: true,
		{Idle, Paused}: true, {Snapshotting, Paused}: true, {Shipping, Paused}: true,
	}
	phases := []Phase{Idle, Snapshotting, Shipping, Paused}
	for _, from := range phases {
		for _, to := range phases {
			p := Pairing{Phase: from}
			panicked := func() (panicked bool) {
				defer func() { panicked = recover() != nil }()
				p.transition(to)
				return false
			}()
			want := from == to || legal[[2]Phase{from, to}]
			if panicked == want {
				t.Errorf("%s -> %s: panicked %v, want a panic only on an illegal edge", from, to, panicked)
			}
		}
	}
}
