package chart

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/chain"
)

// Values are the chart's values (baton/values.yaml documents each one). Start
// from Defaults, which parses values.yaml, and change what differs: every
// field is passed to the chart, so a zero field means zero, not "default".
type Values struct {
	Image                  Image                  `json:"image"`
	Images                 ComponentImages        `json:"images"`
	Site                   Site                   `json:"site"`
	Storage                Storage                `json:"storage"`
	StorageCluster         StorageCluster         `json:"storageCluster"`
	Operator               Operator               `json:"operator"`
	Node                   Node                   `json:"node"`
	CSI                    CSI                    `json:"csi"`
	CSIAddons              CSIAddons              `json:"csiAddons"`
	TLS                    TLS                    `json:"tls"`
	CrossSite              CrossSite              `json:"crossSite"`
	Peers                  []Peer                 `json:"peers,omitempty"`
	Secrets                Secrets                `json:"secrets"`
	StorageClass           StorageClass           `json:"storageClass"`
	VolumeReplicationClass VolumeReplicationClass `json:"volumeReplicationClass"`
}

// Image is baton's image.
type Image struct {
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	PullPolicy string `json:"pullPolicy"`
}

// Ref is the image's reference, repository:tag.
func (i Image) Ref() string { return i.Repository + ":" + i.Tag }

// ComponentImages override single components' images; empty runs the
// component from baton's image.
type ComponentImages struct {
	CSIProvisioner   string `json:"csiProvisioner"`
	Registrar        string `json:"registrar"`
	CSIAddonsSidecar string `json:"csiAddonsSidecar"`
	CSIAddonsManager string `json:"csiAddonsManager"`
}

// Site names the site and the StorageCluster its operator runs.
type Site struct {
	Name      string `json:"name"`
	ClusterID string `json:"clusterID"`
}

// The storage modes.
const (
	ModeBtrfs   = "btrfs"
	ModeZFSDRBD = "zfs-drbd"
)

// Storage is the storage mode and its state on the nodes.
type Storage struct {
	Mode         string        `json:"mode"`
	HostDir      string        `json:"hostDir"`
	Nodes        []StorageNode `json:"nodes,omitempty"`
	Btrfs        Btrfs         `json:"btrfs"`
	ZFS          ZFS           `json:"zfs"`
	CheckModules bool          `json:"checkModules"`
}

// StorageNode is one of the site's storage nodes.
type StorageNode struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	// DRBDMinorOffset (zfs-drbd mode with ZFS.SharedKernel) is added to the
	// node's DRBD minors, so that the nodes on one kernel use disjoint ones.
	DRBDMinorOffset uint32 `json:"drbdMinorOffset,omitempty"`
}

// Btrfs configures the btrfs mode's pools.
type Btrfs struct {
	PoolSizeBytes int64 `json:"poolSizeBytes"`
}

// ZFS configures the zfs-drbd mode's pools.
type ZFS struct {
	Dataset       string `json:"dataset"`
	PoolFile      string `json:"poolFile"`
	PoolSizeBytes int64  `json:"poolSizeBytes"`
	// SharedKernel says the storage nodes share one kernel (kind's): each
	// node agent names its DRBD resources after its node and adds its
	// StorageNode's DRBDMinorOffset to their minors.
	SharedKernel bool `json:"sharedKernel"`
}

// StorageCluster makes the StorageCluster and StorageNodes directly.
type StorageCluster struct {
	Create              bool   `json:"create"`
	Name                string `json:"name"`
	PoolName            string `json:"poolName"`
	PlaceCount          int    `json:"placeCount"`
	ReplicationInterval string `json:"replicationInterval"`
	// ThinOvercommitPercent bounds what a thin pool promises: provisioned
	// bytes up to the pool's size times this over 100 (docs/capacity.md).
	// 0 leaves it to the StorageCluster's default, 400.
	ThinOvercommitPercent int `json:"thinOvercommitPercent"`
	// DRBDPorts and DRBDMinors are the ranges the site's operator allocates
	// DRBD ports and minors from (zfs-drbd mode; btrfs runs no DRBD and its
	// StorageCluster leaves them to the API server's defaults). Minors are
	// kernel-wide: sites whose nodes share a kernel (the real bed's kind
	// nodes) need ranges that do not overlap.
	DRBDPorts  v1alpha1.PortRange  `json:"drbdPorts"`
	DRBDMinors v1alpha1.MinorRange `json:"drbdMinors"`
}

// Operator is baton-controller's Deployment.
type Operator struct {
	Replicas       int            `json:"replicas"`
	LeaderElect    bool           `json:"leaderElect"`
	StorageAPIPort int            `json:"storageAPIPort"`
	TickInterval   string         `json:"tickInterval"`
	LogLevel       int            `json:"logLevel"`
	Resources      map[string]any `json:"resources,omitempty"`
	// Discovery is what the operator's discovery runs read (its
	// --discovery-file); empty, they fail saying so.
	Discovery []DiscoveryNode `json:"discovery,omitempty"`
}

// DiscoveryNode is one node's candidate devices, as a discovery run reads
// them (controllers/site.NodeCandidates).
type DiscoveryNode struct {
	Name    string                     `json:"name"`
	Address string                     `json:"address,omitempty"`
	Labels  map[string]string          `json:"labels,omitempty"`
	Devices []v1alpha1.CandidateDevice `json:"devices,omitempty"`
}

// Node is the node DaemonSet.
type Node struct {
	HostNetwork  bool              `json:"hostNetwork"`
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Tolerations  []map[string]any  `json:"tolerations,omitempty"`
	Interval     string            `json:"interval"`
	KubeletDir   string            `json:"kubeletDir"`
	LogLevel     int               `json:"logLevel"`
	Resources    map[string]any    `json:"resources,omitempty"`
}

// CSI is the CSI driver.
type CSI struct {
	DriverName          string `json:"driverName"`
	ControllerReplicas  int    `json:"controllerReplicas"`
	ProvisionerTimeout  string `json:"provisionerTimeout"`
	ControllerSocketDir string `json:"controllerSocketDir"`
	Registrar           string `json:"registrar"`
	LogLevel            int    `json:"logLevel"`
}

// CSIAddons is the csi-addons sidecar and controller manager.
type CSIAddons struct {
	Enabled     bool             `json:"enabled"`
	SidecarPort int              `json:"sidecarPort"`
	Manager     CSIAddonsManager `json:"manager"`
}

// CSIAddonsManager is the csi-addons controller manager.
type CSIAddonsManager struct {
	Enabled     bool           `json:"enabled"`
	LeaderElect bool           `json:"leaderElect"`
	Resources   map[string]any `json:"resources,omitempty"`
}

// TLS names the certificate secrets, and holds their PEMs when the chart
// makes them (Create). The PEMs end up in the release's values, which Helm
// keeps in a Secret of the namespace.
type TLS struct {
	Create           bool   `json:"create"`
	CASecret         string `json:"caSecret"`
	StorageAPISecret string `json:"storageAPISecret"`
	StreamSecret     string `json:"streamSecret"`
	CA               string `json:"ca"`
	StorageAPICert   string `json:"storageAPICert"`
	StorageAPIKey    string `json:"storageAPIKey"`
	StreamCert       string `json:"streamCert"`
	StreamKey        string `json:"streamKey"`
}

// CrossSite exposes the storage API and the stream servers to other sites.
type CrossSite struct {
	Enabled            bool   `json:"enabled"`
	Host               string `json:"host"`
	StorageAPINodePort int    `json:"storageAPINodePort"`
	StreamPort         int    `json:"streamPort"`
	StreamNodePort     int    `json:"streamNodePort"`
}

// Peer is another site's storage cluster, as its CSI secret's local entry
// says: registered in this site's CSI secret with local false.
type Peer struct {
	ClusterID string `json:"clusterID"`
	Endpoint  string `json:"endpoint"`
	Secret    string `json:"secret"`
}

// Secrets names the CSI secret (the operator's) and the peers secret (the
// chart's).
type Secrets struct {
	CSI   string `json:"csi"`
	Peers string `json:"peers,omitempty"`
}

// StorageClass is the chart's StorageClass.
type StorageClass struct {
	Create               bool   `json:"create"`
	Name                 string `json:"name"`
	IsDefault            bool   `json:"isDefault"`
	ReclaimPolicy        string `json:"reclaimPolicy"`
	VolumeBindingMode    string `json:"volumeBindingMode"`
	AllowVolumeExpansion bool   `json:"allowVolumeExpansion"`
	Provisioning         string `json:"provisioning"`
}

// VolumeReplicationClass is the chart's VolumeReplicationClass.
type VolumeReplicationClass struct {
	Create          bool   `json:"create"`
	Name            string `json:"name"`
	TargetClusterID string `json:"targetClusterID"`
	// SchedulingInterval is how often the csi-addons controller asks a
	// primary's replication info (its last sync time) -- an hour when
	// empty -- and what Ramen matches a DRPolicy's interval against.
	SchedulingInterval string `json:"schedulingInterval"`
}

// Defaults are the chart's values.yaml.
func Defaults() (Values, error) {
	data, err := files.ReadFile(Name + "/values.yaml")
	if err != nil {
		return Values{}, err
	}
	var v Values
	if err := yaml.UnmarshalStrict(data, &v); err != nil {
		return Values{}, fmt.Errorf("the chart's values.yaml does not fit Values: %w", err)
	}
	return v, nil
}

// Map is what Helm takes: the values as JSON would carry them. Empty lists
// and maps are left out (their defaults are empty too): Helm reads a null
// value as "delete the default".
func (v Values) Map() (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

// namePattern is a DNS label's.
var namePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ErrInvalidValues wraps every problem Validate finds.
var ErrInvalidValues = errors.New("invalid chart values")

// Validate reports every problem of the values at once, before Helm renders
// anything (the templates check the same with required and fail, one at a
// time). It never quotes a secret.
func (v Values) Validate() error {
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if v.Image.Repository == "" || v.Image.Tag == "" {
		problem("image.repository and image.tag are required (the tag make images printed)")
	}
	if !namePattern.MatchString(v.Site.Name) || len(v.Site.Name) > 63 {
		problem("site.name %q must be a DNS label", v.Site.Name)
	}
	if v.Site.ClusterID != "" && !chain.IsUUID(v.Site.ClusterID) {
		problem("site.clusterID %q is not a lower-case UUID", v.Site.ClusterID)
	}
	problems = append(problems, v.storageProblems()...)
	problems = append(problems, v.discoveryProblems()...)
	problems = append(problems, v.crossSiteProblems()...)
	if v.TLS.Create && (v.TLS.CA == "" || v.TLS.StorageAPICert == "" || v.TLS.StorageAPIKey == "") {
		problem("tls.create needs tls.ca, tls.storageAPICert and tls.storageAPIKey")
	}
	if v.TLS.Create && v.CrossSite.Enabled && (v.TLS.StreamCert == "" || v.TLS.StreamKey == "") {
		problem("tls.create with crossSite.enabled needs tls.streamCert and tls.streamKey")
	}
	if v.CSI.ControllerSocketDir != "" && !strings.HasPrefix(v.CSI.ControllerSocketDir, "/") {
		problem("csi.controllerSocketDir %q is not an absolute path", v.CSI.ControllerSocketDir)
	}
	if v.CSI.Registrar != "stand-in" && v.CSI.Registrar != "node-driver-registrar" {
		problem("csi.registrar %q: want stand-in or node-driver-registrar", v.CSI.Registrar)
	}
	if v.CSI.Registrar == "node-driver-registrar" && v.Images.Registrar == "" {
		problem("csi.registrar node-driver-registrar needs images.registrar")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidValues, strings.Join(problems, "; "))
	}
	return nil
}

func (v Values) storageProblems() []string {
	var problems []string
	switch v.Storage.Mode {
	case ModeBtrfs:
		if v.Storage.Btrfs.PoolSizeBytes <= 0 {
			problems = append(problems, "storage.btrfs.poolSizeBytes must be positive")
		}
	case ModeZFSDRBD:
		if len(v.Storage.Nodes) < 2 {
			problems = append(problems, fmt.Sprintf("storage.mode zfs-drbd needs at least 2 storage.nodes (DRBD inside the site), got %d", len(v.Storage.Nodes)))
		}
		if v.Storage.ZFS.Dataset == "" {
			problems = append(problems, "storage.mode zfs-drbd needs storage.zfs.dataset")
		}
		if v.Storage.ZFS.PoolFile != "" && v.Storage.ZFS.PoolSizeBytes <= 0 {
			problems = append(problems, "storage.zfs.poolFile needs a positive storage.zfs.poolSizeBytes")
		}
		problems = append(problems, v.StorageCluster.drbdRangeProblems()...)
	default:
		problems = append(problems, fmt.Sprintf("storage.mode %q: want %s or %s", v.Storage.Mode, ModeBtrfs, ModeZFSDRBD))
	}
	if p := v.StorageCluster.ThinOvercommitPercent; p != 0 && (p < 100 || p > 10000) {
		problems = append(problems, fmt.Sprintf("storageCluster.thinOvercommitPercent %d: want 0 (the default, 400) or 100 to 10000", p))
	}
	if !strings.HasPrefix(v.Storage.HostDir, "/") {
		problems = append(problems, fmt.Sprintf("storage.hostDir %q is not an absolute path", v.Storage.HostDir))
	}
	for i, n := range v.Storage.Nodes {
		if n.Name == "" || net.ParseIP(n.Address) == nil {
			problems = append(problems, fmt.Sprintf("storage.nodes[%d] needs a name and an IP address, got %q at %q", i, n.Name, n.Address))
		}
	}
	if v.StorageCluster.Create && v.Site.ClusterID == "" {
		problems = append(problems, "storageCluster.create needs site.clusterID")
	}
	return problems
}

// drbdRangeProblems checks the DRBD ranges as the StorageCluster's schema
// does: ports 1-65535, minors 0-1048575 (DRBD's largest), min not above max.
func (c StorageCluster) drbdRangeProblems() []string {
	var problems []string
	if p := c.DRBDPorts; p.Min < 1 || p.Max > 65535 || p.Min > p.Max {
		problems = append(problems, fmt.Sprintf("storageCluster.drbdPorts %d-%d: want 1 <= min <= max <= 65535", p.Min, p.Max))
	}
	if m := c.DRBDMinors; m.Min < 0 || m.Max > 1048575 || m.Min > m.Max {
		problems = append(problems, fmt.Sprintf("storageCluster.drbdMinors %d-%d: want 0 <= min <= max <= 1048575", m.Min, m.Max))
	}
	return problems
}

// discoveryProblems checks the discovery list as the operator's parser
// does: names unique and non-empty, device paths absolute, sizes not
// negative.
func (v Values) discoveryProblems() []string {
	var problems []string
	seen := map[string]bool{}
	for i, n := range v.Operator.Discovery {
		if n.Name == "" || seen[n.Name] {
			problems = append(problems, fmt.Sprintf("operator.discovery[%d]: node name %q is empty or repeated", i, n.Name))
		}
		seen[n.Name] = true
		for j, d := range n.Devices {
			if !strings.HasPrefix(d.Path, "/") || d.SizeBytes < 0 {
				problems = append(problems, fmt.Sprintf("operator.discovery[%d].devices[%d]: %q of %d bytes: want an absolute path and a size not negative",
					i, j, d.Path, d.SizeBytes))
			}
		}
	}
	return problems
}

func (v Values) crossSiteProblems() []string {
	var problems []string
	if v.CrossSite.Enabled && v.CrossSite.Host == "" {
		problems = append(problems, "crossSite.enabled needs crossSite.host, the address peers reach the storage API at")
	}
	for i, p := range v.Peers {
		if !chain.IsUUID(p.ClusterID) || !strings.HasPrefix(p.Endpoint, "https://") || p.Secret == "" {
			problems = append(problems, fmt.Sprintf("peers[%d] needs a lower-case UUID clusterID, an https endpoint and a secret", i))
		}
		if p.ClusterID == v.Site.ClusterID && p.ClusterID != "" {
			problems = append(problems, fmt.Sprintf("peers[%d] is this site's own cluster", i))
		}
	}
	return problems
}
