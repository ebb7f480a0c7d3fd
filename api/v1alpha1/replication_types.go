package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Replication condition types and reasons.
const (
	// ReplicationReadyCondition is true when the pairing is enabled and its
	// target answers.
	ReplicationReadyCondition = "Ready"
	// ReplicationReadyReason: the pairing ships.
	ReplicationReadyReason = "Ready"
	// ReplicationDisabledReason: spec.enabled is false.
	ReplicationDisabledReason = "Disabled"
	// ReplicationTargetUnreachableReason: the target cluster does not answer.
	ReplicationTargetUnreachableReason = "TargetUnreachable"

	// ReplicationInSyncCondition is true when the newest snapshot reached the
	// target within the interval.
	ReplicationInSyncCondition = "InSync"
	// ReplicationInSyncReason: the target holds the newest snapshot.
	ReplicationInSyncReason = "InSync"
	// ReplicationSyncingReason: a delta is on its way.
	ReplicationSyncingReason = "Syncing"
	// ReplicationResyncingReason: the pairing was re-aimed at a recovered site
	// and ships the delta since the common snapshot.
	ReplicationResyncingReason = "Resyncing"
	// ReplicationNoCommonSnapshotReason: source and target share no snapshot;
	// only a full copy can resume the pairing.
	ReplicationNoCommonSnapshotReason = "NoCommonSnapshot"
	// ReplicationSyncFailedReason: the latest sync failed; the message says why.
	ReplicationSyncFailedReason = "SyncFailed"

	// ReplicationDegradedCondition is true when shipments fail or the target
	// holds nothing newer than three intervals.
	ReplicationDegradedCondition = "Degraded"
	// ReplicationAsExpectedReason: shipments succeed on schedule.
	ReplicationAsExpectedReason = "AsExpected"
	// ReplicationBehindReason: the newest snapshot the target holds is older
	// than three intervals.
	ReplicationBehindReason = "Behind"
	// ReplicationPausedReason: the pairing takes no snapshots.
	ReplicationPausedReason = "Paused"
)

// ReplicationPhase is the coarse state of a pairing, for people.
// +kubebuilder:validation:Enum=Enabled;Syncing;InSync;Resyncing;Degraded;Disabled;Failed
type ReplicationPhase string

const (
	// ReplicationEnabled: set up, the first sync has not completed.
	ReplicationEnabled ReplicationPhase = "Enabled"
	// ReplicationSyncing: a delta is on its way.
	ReplicationSyncing ReplicationPhase = "Syncing"
	// ReplicationInSync: the target holds a snapshot no older than the interval.
	ReplicationInSync ReplicationPhase = "InSync"
	// ReplicationResyncing: re-aimed at a recovered site, shipping the delta.
	ReplicationResyncing ReplicationPhase = "Resyncing"
	// ReplicationDegraded: syncs fail or fall behind; the pairing retries.
	ReplicationDegraded ReplicationPhase = "Degraded"
	// ReplicationDisabled: spec.enabled is false.
	ReplicationDisabled ReplicationPhase = "Disabled"
	// ReplicationFailed: the pairing cannot continue without intervention.
	ReplicationFailed ReplicationPhase = "Failed"
)

// ReplicationSpec pairs a source member with a target cluster.
// +kubebuilder:validation:XValidation:rule="!self.sourceVolume.startsWith(self.targetCluster + ':')",message="a replication cannot target its source's own cluster",fieldPath=".targetCluster"
type ReplicationSpec struct {
	// SourceVolume is the member that ships its snapshots. The pairing is
	// this member's: it never changes.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="sourceVolume is immutable"
	// +required
	SourceVolume VolumeHandle `json:"sourceVolume"`

	// TargetCluster is the cluster that keeps the replica.
	// +required
	TargetCluster UUID `json:"targetCluster"`

	// Interval is how often a snapshot ships. A positive duration in Go's
	// notation ("5m", "90s").
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="the interval must be positive"
	// +kubebuilder:default="5m"
	// +optional
	Interval metav1.Duration `json:"interval,omitzero"`

	// Retention is how many replicated snapshots are kept, at least two (the
	// common base of the next delta must outlive the arrival of the next one).
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=3
	// +optional
	Retention int32 `json:"retention,omitempty"`

	// FailbackSource is set by a resync: the recovered site's cluster that the
	// pairing re-aims at, shipping only the delta since the common snapshot.
	// +optional
	FailbackSource UUID `json:"failbackSource,omitempty"`

	// Enabled says whether snapshots ship. A disabled pairing keeps its
	// snapshots, so re-enabling ships a delta.
	// +kubebuilder:default=true
	// +optional
	Enabled bool `json:"enabled"`
}

// ReplicationStatus is what the latest syncs achieved.
type ReplicationStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the coarse state, for people.
	// +optional
	Phase ReplicationPhase `json:"phase,omitempty"`

	// LastSyncTime is when the latest completed sync's snapshot was taken: the
	// recovery point an unplanned fail-over would restore.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`

	// LastSyncDuration is how long the latest completed sync took.
	// +optional
	LastSyncDuration *metav1.Duration `json:"lastSyncDuration,omitempty"`

	// LastSyncBytes is how many bytes the latest completed sync shipped.
	// +kubebuilder:validation:Minimum=0
	// +optional
	LastSyncBytes int64 `json:"lastSyncBytes,omitempty"`

	// LastSnapshot is the newest snapshot the target holds.
	// +optional
	LastSnapshot *SnapshotRef `json:"lastSnapshot,omitempty"`

	// CommonSnapshot is the newest snapshot both sides hold: the base of the
	// next delta.
	// +optional
	CommonSnapshot *SnapshotRef `json:"commonSnapshot,omitempty"`

	// Conditions: Ready, InSync, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Cycle is the storage core's record of the pairing's cycle, which the
	// fields above summarise for people.
	// +optional
	Cycle *ReplicationCycle `json:"cycle,omitempty"`
}

// CyclePhase is where a pairing is in its snapshot-and-ship cycle.
// +kubebuilder:validation:Enum=Idle;Snapshotting;Shipping;Paused
type CyclePhase string

const (
	// CycleIdle waits until the next snapshot is due.
	CycleIdle CyclePhase = "Idle"
	// CycleSnapshotting: a snapshot has been ordered on the source.
	CycleSnapshotting CyclePhase = "Snapshotting"
	// CycleShipping: a snapshot is taken and its stream is owed to the target.
	CycleShipping CyclePhase = "Shipping"
	// CyclePaused takes no snapshots (disabled, or the source was superseded).
	CyclePaused CyclePhase = "Paused"
)

// CycleSnapshot is one snapshot of the source taken for the pairing.
type CycleSnapshot struct {
	SnapshotRef `json:",inline"`

	// OrderedAt is when the site ordered it: the node takes it at or after.
	// +optional
	OrderedAt Timestamp `json:"orderedAt,omitempty"`

	// TakenAt is its recovery point -- it holds every write acknowledged
	// before then: the time it was ordered, since the site learns of the
	// snapshot only when the node reports it, which may be much later. Empty
	// until taken.
	// +optional
	TakenAt Timestamp `json:"takenAt,omitempty"`

	// ShippedAt is when the target was known to hold it; empty until then.
	// +optional
	ShippedAt Timestamp `json:"shippedAt,omitempty"`
}

// CycleBase is what the next stream is incremental from.
type CycleBase struct {
	// Dataset is empty for the source itself, or the pool volume the source
	// was cloned from, for a clone stream from the origin snapshot.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Dataset string `json:"dataset,omitempty"`

	// Snapshot is the base's name; empty for a full stream.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Snapshot string `json:"snapshot,omitempty"`

	// GUID identifies the base on the receivers.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	GUID string `json:"guid,omitempty"`
}

// CycleSync is the last completed shipment, exactly.
type CycleSync struct {
	// At is when the shipment finished.
	// +optional
	At Timestamp `json:"at,omitempty"`

	// Duration is how long it took.
	// +optional
	Duration metav1.Duration `json:"duration,omitzero"`

	// Bytes is how many bytes it shipped.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Bytes int64 `json:"bytes,omitempty"`

	// Snapshot is the snapshot it shipped.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Snapshot string `json:"snapshot,omitempty"`
}

// CycleReceiver is a node of the target site that takes the pairing's streams.
type CycleReceiver struct {
	// Node is the target site's storage node.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Node string `json:"node"`

	// Address is where its node agent accepts streams.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Address string `json:"address,omitempty"`

	// Token authorises this site's streams into the target's replica: a
	// capability the target derived for this one source (HMAC of its own
	// cluster secret), not the cluster secret itself. It is never logged;
	// who may read Replications in the operator's namespace may ship into
	// the replica, so that namespace's read access is the operator's alone.
	// +optional
	Token string `json:"token,omitempty"`
}

// ReplicationCycle is the storage core's record of one pairing
// (storage/replication.Pairing and what the site keeps with it).
type ReplicationCycle struct {
	// Phase is where the cycle is.
	// +required
	Phase CyclePhase `json:"phase"`

	// Sequence is the number of the last snapshot ordered.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Sequence int64 `json:"sequence,omitempty"`

	// Snapshots are the pairing's snapshots of the source, oldest first.
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Snapshots []CycleSnapshot `json:"snapshots,omitempty"`

	// Base is what the next stream is incremental from.
	// +optional
	Base CycleBase `json:"base,omitzero"`

	// Due is when the next snapshot is due.
	// +optional
	Due Timestamp `json:"due,omitempty"`

	// RetryAt is when a failed shipment is retried.
	// +optional
	RetryAt Timestamp `json:"retryAt,omitempty"`

	// LastSync is the last completed shipment.
	// +optional
	LastSync CycleSync `json:"lastSync,omitzero"`

	// Failures counts consecutive failed shipments.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failures int64 `json:"failures,omitempty"`

	// LastError is the last failure, in the words of whoever failed.
	// +optional
	LastError string `json:"lastError,omitempty"`

	// Receivers are the target site's nodes that take the streams; empty
	// until the target site answered.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Receivers []CycleReceiver `json:"receivers,omitempty"`

	// ReaimedAt is when a resync last pointed the pairing at its target.
	// +optional
	ReaimedAt Timestamp `json:"reaimedAt,omitempty"`
}

// Replication is a pairing: a source member ships snapshots to a target cluster,
// which keeps a replica.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.sourceVolume`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetCluster`
// +kubebuilder:printcolumn:name="Enabled",type=boolean,JSONPath=`.spec.enabled`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Last Sync",type=date,JSONPath=`.status.lastSyncTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Replication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ReplicationSpec `json:"spec"`
	// +optional
	Status ReplicationStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// ReplicationList is a list of Replications.
type ReplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Replication `json:"items"`
}

func init() {
	register(&Replication{}, &ReplicationList{})
}
