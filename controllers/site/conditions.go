package site

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// The conditions are computed from the records alone, at an instant: no I/O,
// table-tested. The reconcilers read the records and write what these say.

// nodeReportTimeout is how long a node may stay silent and still count as
// reachable: its agent reports every few seconds.
const nodeReportTimeout = 30 * time.Second

// staleIntervals is how many intervals without a completed shipment make a
// pairing Behind (the core's Status says Degraded at the same point).
const staleIntervals = 3

func condition(conditionType string, status bool, reason, message string) metav1.Condition {
	c := metav1.Condition{Type: conditionType, Status: metav1.ConditionFalse, Reason: reason, Message: message}
	if status {
		c.Status = metav1.ConditionTrue
	}
	return c
}

// volumeConditions are a member's Ready, Replicating and Degraded.
func volumeConditions(v core.Volume, p *core.Pairing) []metav1.Condition {
	ready := condition(v1.VolumeReadyCondition, true, v1.VolumeReadyReason, "the volume can be attached")
	switch {
	case v.State == chain.Tombstone:
		ready = condition(v1.VolumeReadyCondition, false, v1.VolumeTombstoneReason, "reaped: only the record and snapshots stay")
	case v.State == chain.Demoted && !v.Successor.IsZero():
		ready = condition(v1.VolumeReadyCondition, false, v1.VolumeDemotedReason, "superseded by "+v.Successor.String())
	case v.State == chain.Demoted:
		ready = condition(v1.VolumeReadyCondition, false, v1.VolumeDemotedReason, "demoted: read-only")
	case v.Deleting:
		ready = condition(v1.VolumeReadyCondition, false, v1.VolumeDeletingReason,
			fmt.Sprintf("%d of %d nodes destroyed the data", len(v.Destroyed), len(v.Allocation.Replicas)))
	case len(v.Present) == 0:
		ready = condition(v1.VolumeReadyCondition, false, v1.VolumeProvisioningReason, "no node has reported the volume's dataset yet")
	}
	replicating := condition(v1.VolumeReplicatingCondition, false, v1.VolumeNotReplicatedReason, "no replication")
	switch {
	case p != nil && p.Phase == replication.Paused:
		replicating = condition(v1.VolumeReplicatingCondition, false, v1.VolumeReplicationPausedReason, "replication takes no snapshots")
	case p != nil:
		replicating = condition(v1.VolumeReplicatingCondition, true, v1.VolumeReplicatingReason,
			fmt.Sprintf("ships to %s every %s", p.Target, p.Interval))
	}
	degraded := condition(v1.VolumeDegradedCondition, false, v1.VolumeAsExpectedReason, "as protected as asked")
	switch {
	case len(v.StandAlone) > 0:
		degraded = condition(v1.VolumeDegradedCondition, true, v1.VolumeSplitBrainReason,
			fmt.Sprintf("DRBD on %s stopped connecting to a peer (split brain): choose the replica whose data to discard", strings.Join(v.StandAlone, ", ")))
	case v.State == chain.Active && len(v.Present) > 0 && len(v.Present) < v.PlaceCount:
		degraded = condition(v1.VolumeDegradedCondition, true, v1.VolumeReplicaMissingReason,
			fmt.Sprintf("%d of %d nodes report the data", len(v.Present), v.PlaceCount))
	case p != nil && p.Phase != replication.Paused && p.Failures > 0:
		degraded = condition(v1.VolumeDegradedCondition, true, v1.VolumeSyncFailedReason,
			fmt.Sprintf("%d failed shipments: %s", p.Failures, p.LastError))
	}
	return []metav1.Condition{ready, replicating, degraded}
}

// replicationPhase is the coarse state of a pairing at now, for people.
func replicationPhase(p core.Pairing, now time.Time) v1.ReplicationPhase {
	switch {
	case p.Phase == replication.Paused:
		return v1.ReplicationDisabled
	case p.Failures > 0 || behind(p, now):
		return v1.ReplicationDegraded
	case !p.ReaimedAt.IsZero() && !p.InSyncSince(p.ReaimedAt):
		return v1.ReplicationResyncing
	case p.Last.At.IsZero():
		return v1.ReplicationEnabled
	case p.Phase == replication.Shipping:
		return v1.ReplicationSyncing
	}
	return v1.ReplicationInSync
}

func behind(p core.Pairing, now time.Time) bool {
	return !p.Last.At.IsZero() && now.Sub(p.Last.At) > staleIntervals*p.Interval
}

// replicationConditions are a pairing's Ready, InSync and Degraded at now.
func replicationConditions(p core.Pairing, now time.Time) []metav1.Condition {
	ready := condition(v1.ReplicationReadyCondition, true, v1.ReplicationReadyReason,
		fmt.Sprintf("%d receivers on %s", len(p.Receivers), p.Target))
	switch {
	case p.Phase == replication.Paused:
		ready = condition(v1.ReplicationReadyCondition, false, v1.ReplicationDisabledReason, "the pairing takes no snapshots")
	case len(p.Receivers) == 0:
		ready = condition(v1.ReplicationReadyCondition, false, v1.ReplicationTargetUnreachableReason,
			fmt.Sprintf("%s has not named its receivers", p.Target))
	}
	inSync := condition(v1.ReplicationInSyncCondition, true, v1.ReplicationInSyncReason,
		"the target holds a snapshot shipped "+p.Last.Snapshot)
	switch {
	case p.Failures > 0:
		inSync = condition(v1.ReplicationInSyncCondition, false, v1.ReplicationSyncFailedReason, p.LastError)
	case !p.ReaimedAt.IsZero() && !p.InSyncSince(p.ReaimedAt):
		inSync = condition(v1.ReplicationInSyncCondition, false, v1.ReplicationResyncingReason,
			"re-aimed at "+string(p.Target)+"; the delta since the common snapshot is on its way")
	case p.Last.At.IsZero() || behind(p, now):
		inSync = condition(v1.ReplicationInSyncCondition, false, v1.ReplicationSyncingReason, "no recent shipment")
	}
	degraded := condition(v1.ReplicationDegradedCondition, false, v1.ReplicationAsExpectedReason, "shipments succeed on schedule")
	switch {
	case p.Phase == replication.Paused:
		degraded = condition(v1.ReplicationDegradedCondition, false, v1.ReplicationPausedReason, "the pairing takes no snapshots")
	case p.Failures > 0:
		degraded = condition(v1.ReplicationDegradedCondition, true, v1.ReplicationSyncFailedReason,
			fmt.Sprintf("%d failed shipments: %s", p.Failures, p.LastError))
	case behind(p, now):
		degraded = condition(v1.ReplicationDegradedCondition, true, v1.ReplicationBehindReason,
			fmt.Sprintf("last shipment %s ago, interval %s", now.Sub(p.Last.At).Truncate(time.Second), p.Interval))
	}
	return []metav1.Condition{ready, inSync, degraded}
}

// nodeConditions are a node's Reachable and Ready at now.
func nodeConditions(n core.Node, now time.Time) []metav1.Condition {
	if n.ReportedAt.IsZero() || now.Sub(n.ReportedAt) > nodeReportTimeout {
		message := "the node agent has never reported"
		if !n.ReportedAt.IsZero() {
			message = fmt.Sprintf("the node agent last reported %s ago", now.Sub(n.ReportedAt).Truncate(time.Second))
		}
		return []metav1.Condition{
			condition(v1.StorageNodeReachableCondition, false, v1.StorageNodeUnreachableReason, message),
			condition(v1.StorageNodeReadyCondition, false, v1.StorageNodeNotReadyReason, message),
		}
	}
	return []metav1.Condition{
		condition(v1.StorageNodeReachableCondition, true, v1.StorageNodeReachableReason, "the node agent reports"),
		condition(v1.StorageNodeReadyCondition, true, v1.StorageNodeReadyReason, "the node can hold replicas"),
	}
}

// replicaConditions is a replica's Received.
func replicaConditions(r core.Replica) []metav1.Condition {
	if !r.ClonedInto.IsZero() {
		return []metav1.Condition{condition(v1.ReplicaReceivedCondition, false, v1.ReplicaClonedReason,
			"failed over into "+r.ClonedInto.String())}
	}
	for _, node := range r.Nodes {
		if len(r.Received[node]) == 0 {
			return []metav1.Condition{condition(v1.ReplicaReceivedCondition, false, v1.ReplicaWaitingReason,
				node+" holds no snapshot yet")}
		}
	}
	return []metav1.Condition{condition(v1.ReplicaReceivedCondition, true, v1.ReplicaReceivedReason,
		"every receiving node holds a snapshot")}
}
