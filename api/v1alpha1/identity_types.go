package v1alpha1

// UUID identifies a storage cluster or a volume: 36 characters, lower-case hex
// in the canonical 8-4-4-4-12 form. Lower case only, so that two spellings of the
// same identity cannot both be stored and compare unequal (handles are compared as
// strings, by CEL here and by the chain walks).
//
// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
// +kubebuilder:validation:MaxLength=36
type UUID string

// VolumeHandle names one chain member, "<cluster-uuid>:<volume-uuid>". The root
// member's handle is the PersistentVolume's volume handle, kept for ever across
// every fail-over; the later members are named by the same form.
//
// +kubebuilder:validation:Pattern=`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`
// +kubebuilder:validation:MaxLength=73
type VolumeHandle string

// SnapshotRef names one snapshot by its name in the pool and by its content GUID.
// The GUID is what two pools agree on after send and receive (ZFS guid, btrfs
// received_uuid); the name is only local.
type SnapshotRef struct {
	// Name is the snapshot's name on its volume ("baton-1700000000").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	Name string `json:"name"`

	// GUID identifies the snapshot's content across pools. Empty until known.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	GUID string `json:"guid,omitempty"`
}

// OriginSnapshot is the snapshot a clone started from: for a fail-over clone, the
// newest snapshot of the source member that this cluster received.
type OriginSnapshot struct {
	// Volume is the member whose snapshot this is, when the operator knows it
	// (a fail-over clone's predecessor, a local member); a test fail-over's
	// bubble names only the dataset.
	// +optional
	Volume VolumeHandle `json:"volume,omitempty"`

	// Dataset is the pool volume on this cluster that holds the snapshot: the
	// replica of another site's member ("rep-<uuid>") or a local member
	// ("vol-<uuid>"). It is what the nodes clone from.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Dataset string `json:"dataset,omitempty"`

	SnapshotRef `json:",inline"`
}
