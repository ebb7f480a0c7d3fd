package drbd

import "github.com/baton-dr/baton/storage/backend"

var _ backend.DeviceFencer = (*nodeView)(nil)

// FenceDevice sets the read-only flag on the resource's device (fenced), or
// lifts it, as the production Replicator does with BLKROSET on /dev/drbdN
// (node/drbd/fence.go, node/fence). The node agent fences a Primary's
// device before it demotes it, so a writer that still holds the device open
// -- which DRBD's demotion refuses (ErrBusy) -- writes nothing more through
// it: from then on its writes are refused (EPERM), on handles opened before
// the fence too, before DRBD sees them. Without it a write goes on through
// DRBD; when the agent then fences the backing volume too, DRBD detaches the
// writer's disk and goes on acknowledging the writes on its peers alone, so
// the member acknowledges writes after its fence, and the diverged tail the
// agent snapshots on the member's home node misses them.
//
// A Secondary's device takes no writes and cannot be opened (EMEDIUMTYPE):
// neither fencing nor lifting has anything to do there, and the flag set
// while it was Primary stays until the agent lifts it on a Primary again.
func (v *nodeView) FenceDevice(resource string, fenced bool) error {
	r, err := v.upReplica(resource)
	if err != nil {
		return err
	}
	if r.role != backend.Primary || r.fenced == fenced {
		return nil
	}
	// Not logged: every demotion fences, and a fence no write meets
	// changes nothing; a write it refuses is logged (device.go).
	r.fenced = fenced
	return nil
}
