package discovery

// Node is what one node reports to a discovery run: the JSON shape of
// controllers/site.NodeCandidates, of which the operator's --discovery-file
// holds a list. The node agent does not import the operator's package (it
// would carry the Kubernetes client into the agent); a test holds the two
// shapes together.
type Node struct {
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	Address string            `json:"address,omitempty"`
	Devices []Device          `json:"devices,omitempty"`
}

// Device is one candidate device: the JSON shape of
// api/v1alpha1.CandidateDevice.
type Device struct {
	Path      string     `json:"path"`
	Type      DeviceType `json:"type,omitempty"`
	SizeBytes int64      `json:"sizeBytes,omitempty"`
	Model     string     `json:"model,omitempty"`
}

// DeviceType says what backs a device: api/v1alpha1.DeviceType's values.
type DeviceType string

const (
	// Disk is a block device of the node (/dev/sdb).
	Disk DeviceType = "Disk"
	// LoopFile is a file attached as a loop device (a loop-backed pool's image).
	LoopFile DeviceType = "LoopFile"
)

func (t DeviceType) String() string { return string(t) }
