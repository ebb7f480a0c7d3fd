package v1alpha1

// DiskState is a DRBD replica's disk state as `drbdsetup status --json` reports it.
// +kubebuilder:validation:Enum=Diskless;Attaching;Detaching;Failed;Negotiating;Inconsistent;Outdated;DUnknown;Consistent;UpToDate
type DiskState string

const (
	DiskStateDiskless     DiskState = "Diskless"
	DiskStateAttaching    DiskState = "Attaching"
	DiskStateDetaching    DiskState = "Detaching"
	DiskStateFailed       DiskState = "Failed"
	DiskStateNegotiating  DiskState = "Negotiating"
	DiskStateInconsistent DiskState = "Inconsistent"
	DiskStateOutdated     DiskState = "Outdated"
	// DiskStateUnknown is a peer's disk whose state this node cannot see.
	DiskStateUnknown    DiskState = "DUnknown"
	DiskStateConsistent DiskState = "Consistent"
	DiskStateUpToDate   DiskState = "UpToDate"
)
