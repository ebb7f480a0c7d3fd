package infra

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// kindConfig is the cluster's kind configuration: one node of the bed's
// node image, kind's CNI off (kindnet is not served here; the static CNI
// config over the node's podCIDR is all a one-node cluster needs), the
// cluster's own pod and service ranges. A site's node also gets the host's
// /dev (baton-node attaches loop devices, and a privileged container's /dev
// is a copy made at its start that would lack the new ones) and a host
// directory for its pool, where teardown finds what is left. The storage
// mode adds a zfs-drbd site's storage workers (StorageMode.kindNodes).
func kindConfig(c Cluster, paths Paths, mode StorageMode) *v1alpha4.Cluster {
	node := v1alpha4.Node{Role: v1alpha4.ControlPlaneRole, Image: NodeImage, ExtraMounts: []v1alpha4.Mount{
		{HostPath: cniConfigPath(c, paths), ContainerPath: "/etc/cni/net.d/10-baton-realbed.conflist", Readonly: true},
	}}
	if c.Site != "" {
		node.ExtraMounts = append(node.ExtraMounts,
			v1alpha4.Mount{HostPath: "/dev", ContainerPath: "/dev"},
			v1alpha4.Mount{HostPath: paths.SiteState(c.Name), ContainerPath: "/var/lib/baton-realbed"})
	}
	config := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:     c.Name,
		Nodes:    mode.kindNodes(c, paths, node),
		Networking: v1alpha4.Networking{IPFamily: v1alpha4.IPv4Family, PodSubnet: c.PodSubnet.String(),
			ServiceSubnet: c.ServiceSubnet.String(), DisableDefaultCNI: true},
	}
	v1alpha4.SetDefaultsCluster(config)
	return config
}

func cniConfigPath(c Cluster, paths Paths) string {
	return filepath.Join(paths.Run(), c.Name+".conflist")
}

// cniConfig is the control plane's CNI config (cniConfigFor its podCIDR).
func cniConfig(c Cluster) ([]byte, error) { return cniConfigFor(c.NodePodCIDR()) }

// cniConfigFor is a node's CNI config: ptp links over its pod range,
// masquerading what leaves the node, and portmap for hostPorts.
func cniConfigFor(pods netip.Prefix) ([]byte, error) {
	doc := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "baton-realbed",
		"plugins": []any{
			map[string]any{"type": "ptp", "ipMasq": true, "mtu": 1500, "ipam": map[string]any{
				"type": "host-local", "dataDir": "/run/cni-ipam-state",
				"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				"ranges": [][]map[string]string{{{"subnet": pods.String()}}},
			}},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// kindLogger hands kind's progress to a log file of the cluster's.
type kindLogger struct{ w io.Writer }

var _ kindlog.Logger = kindLogger{}

func (l kindLogger) Warn(message string)                { fmt.Fprintln(l.w, message) }
func (l kindLogger) Warnf(format string, args ...any)   { fmt.Fprintf(l.w, format+"\n", args...) }
func (l kindLogger) Error(message string)               { fmt.Fprintln(l.w, message) }
func (l kindLogger) Errorf(format string, args ...any)  { fmt.Fprintf(l.w, format+"\n", args...) }
func (l kindLogger) V(kindlog.Level) kindlog.InfoLogger { return l }
func (l kindLogger) Info(message string)                { fmt.Fprintln(l.w, message) }
func (l kindLogger) Infof(format string, args ...any)   { fmt.Fprintf(l.w, format+"\n", args...) }
func (l kindLogger) Enabled() bool                      { return true }

// provider is kind's docker provider on the private dockerd, the nodes on
// the bed's own network, its messages into w.
func provider(w io.Writer) *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindLogger{w}))
}

// createCluster creates the cluster unless it exists, and writes its
// kubeconfig either way. created says that it did not exist and kind was
// asked to make it: a creation that fails leaves nothing unless retain
// (kind deletes what it made), and with retain the failed cluster's nodes
// stay, for inspection.
func createCluster(c Cluster, paths Paths, mode StorageMode, retain bool) (created bool, err error) {
	logFile, err := os.Create(filepath.Join(paths.Run(), c.Name+".create.log"))
	if err != nil {
		return false, err
	}
	defer logFile.Close()
	p := provider(logFile)
	existing, err := p.List()
	if err != nil {
		return false, fmt.Errorf("kind: listing the clusters: %w", err)
	}
	for _, name := range existing {
		if name == c.Name {
			if err := mode.routePods(p, c); err != nil {
				return false, err
			}
			return false, p.ExportKubeConfig(c.Name, paths.Kubeconfig(c.Name), false)
		}
	}
	if c.Site != "" {
		if err := os.MkdirAll(paths.SiteState(c.Name), 0o755); err != nil {
			return false, err
		}
	}
	config, err := cniConfig(c)
	if err != nil {
		return false, err
	}
	if err := os.WriteFile(cniConfigPath(c, paths), config, 0o644); err != nil {
		return false, err
	}
	if err := mode.writeWorkerCNIConfigs(c, paths); err != nil {
		return false, err
	}
	err = p.Create(c.Name, cluster.CreateWithV1Alpha4Config(kindConfig(c, paths, mode)), cluster.CreateWithNodeImage(NodeImage),
		cluster.CreateWithWaitForReady(5*time.Minute), cluster.CreateWithKubeconfigPath(paths.Kubeconfig(c.Name)),
		cluster.CreateWithDisplayUsage(false), cluster.CreateWithDisplaySalutation(false), cluster.CreateWithRetain(retain))
	if err != nil {
		return true, fmt.Errorf("kind: creating %s: %w (its log: %s)", c.Name, err, logFile.Name())
	}
	return true, mode.routePods(p, c)
}

// deleteClusters deletes the bed's clusters that exist -- never another
// user's cluster on the same dockerd -- and returns the names it deleted.
func deleteClusters(names []string, w io.Writer) (deleted []string, err error) {
	p := provider(w)
	existing, err := p.List()
	if err != nil {
		return nil, fmt.Errorf("kind: listing the clusters: %w", err)
	}
	var errs []string
	for _, name := range existing {
		if !slices.Contains(names, name) {
			continue
		}
		if err := p.Delete(name, ""); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		deleted = append(deleted, name)
	}
	if len(errs) > 0 {
		return deleted, fmt.Errorf("kind: deleting %s", strings.Join(errs, "; "))
	}
	return deleted, nil
}
