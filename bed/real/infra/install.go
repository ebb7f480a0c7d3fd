package infra

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/deploy/chart"
	"github.com/baton-dr/baton/internal/poll"
)

// hostDir is where a site's node mounts its host directory (see kindConfig):
// the chart's storage.hostDir, under which the pool, the device links and
// the CSI controller's sockets live, per site.
const hostDir = "/var/lib/baton-realbed"

// vrSchedulingInterval is the VolumeReplicationClass's schedulingInterval:
// Ramen's default of a minute on the scenarios' time scale.
const vrSchedulingInterval = "10s"

// installLimit bounds one release's install or upgrade, and then the wait
// for the site's storage nodes and the driver's registration with kubelet.
const installLimit = 5 * time.Minute

// site's release as the bed installs it: what differs from the chart's
// values.yaml.
func (in *Infra) values(ctx context.Context, c Cluster, image string, ca *bedCA, peers []chart.Peer) (chart.Values, error) {
	values, err := chart.Defaults()
	if err != nil {
		return values, err
	}
	repository, tag, ok := strings.Cut(image, ":")
	if !ok {
		return values, fmt.Errorf("image %q has no tag", image)
	}
	address, _, err := NodeContainer(ctx, c)
	if err != nil {
		return values, err
	}
	ip := net.ParseIP(address)
	streamIPs, err := in.Storage.siteStorage(c, &values, address, func(node string) (string, error) { return kindNodeAddress(c, node) })
	if err != nil {
		return values, err
	}
	apiCert, apiKey, err := ca.issueOnce(in.Paths, c.Name+".storage-api", "baton-controller."+c.Name,
		[]string{"baton-controller.baton-system.svc", "baton-controller.baton-system.svc.cluster.local"}, []net.IP{ip})
	if err != nil {
		return values, err
	}
	streamCert, streamKey, err := ca.issueOnce(in.Paths, c.Name+".stream", "baton-node-stream."+c.Name, nil, streamIPs)
	if err != nil {
		return values, err
	}
	values.Image.Repository, values.Image.Tag, values.Image.PullPolicy = repository, tag, "Never"
	values.Storage.HostDir = hostDir
	in.storageClusterValues(c, &values, address)
	values.Operator.LeaderElect = false // one replica; a restart need not wait out a lease
	values.CSIAddons.Manager.LeaderElect = false
	values.CSI.ControllerSocketDir = filepath.Dir(in.addonsSocketOnNode(c))
	// csi-addons reads a primary's last sync time this often (an hour by
	// default): a scenario's protection waits for the first one.
	values.VolumeReplicationClass.SchedulingInterval = vrSchedulingInterval
	values.CrossSite = chart.CrossSite{Enabled: true, Host: address, StorageAPINodePort: 30443, StreamPort: 9500, StreamNodePort: 30500}
	values.TLS.Create, values.TLS.CA = true, ca.CertPEM
	values.TLS.StorageAPICert, values.TLS.StorageAPIKey = apiCert, apiKey
	values.TLS.StreamCert, values.TLS.StreamKey = streamCert, streamKey
	values.Peers = peers
	return values, values.Validate()
}

// storageClusterValues name the site and who makes its storage cluster:
// the chart, with the layout's ChartID, or the hub (byHub), whose cluster
// draws its own UUID (the operator runs the namespace's only one). For the
// hub's, the operator's discovery runs read the node's candidate device --
// the pool's loop file, at the node's address -- from the values: the node
// agent publishes its own only once the site has a storage cluster.
func (in *Infra) storageClusterValues(c Cluster, values *chart.Values, address string) {
	values.Site = chart.Site{Name: c.Name}
	values.StorageCluster.ReplicationInterval = ReplicationInterval.String()
	if in.byHub(c) {
		values.StorageCluster.Create = false
		values.Operator.Discovery = []chart.DiscoveryNode{{Name: c.Node(), Address: address, Devices: []v1.CandidateDevice{{
			Path: filepath.Join(hostDir, c.Name, "pool", "pool.img"), Type: v1.DeviceTypeLoopFile, SizeBytes: poolSizeBytes}}}}
		return
	}
	values.Site.ClusterID = string(c.ChartID)
	values.StorageCluster.Create = true
}

// ReplicationInterval is the sites' snapshot interval, whoever makes their
// storage cluster (the chart's values, the hub's request): Ramen's
// five minutes on the scenarios' time scale, roughly.
const ReplicationInterval = 10 * time.Second

// poolSizeBytes is each site's pool (a sparse image: what is written takes
// room). Nothing reaps the chains earlier runs left (their data, and the
// snapshots the other site received, stay in the pools), so the chart's
// 2 GiB filled after a few runs; an existing pool keeps its size.
const poolSizeBytes = 8 << 30

// addonsSocketOnNode is the CSI controller's csi-addons socket as the node
// sees it: Paths.AddonsSocket on the host.
func (in *Infra) addonsSocketOnNode(c Cluster) string {
	rel, _ := filepath.Rel(in.Paths.SiteState(c.Name), in.Paths.AddonsSocket(c.Name))
	return filepath.Join(hostDir, rel)
}

func (in *Infra) target(c Cluster) (chart.Target, error) {
	config, err := chart.FromKubeconfig(in.Paths.Kubeconfig(c.Name), "")
	if err != nil {
		return chart.Target{}, err
	}
	return chart.Target{Config: config, Wait: true, Timeout: installLimit}, nil
}

// install loads the image into the site's nodes and installs (or upgrades)
// the chart's release there with values, then waits until the site's
// storage nodes are Ready and kubelet knows the driver on each.
func (in *Infra) install(ctx context.Context, c Cluster, image string, values chart.Values) (string, error) {
	if _, err := LoadImages(ctx, c, image); err != nil {
		return "", err
	}
	t, err := in.target(c)
	if err != nil {
		return "", err
	}
	objects, err := in.Objects(c)
	if err != nil {
		return "", err
	}
	storage, err := siteStorageCluster(ctx, objects)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	if err := checkStorageMaker(storage, in.byHub(c), c); err != nil {
		return "", err
	}
	if storage == nil && in.byHub(c) {
		return in.installAwaitingHub(ctx, c, t, values)
	}
	endpoint := fmt.Sprintf("https://%s:%d", values.CrossSite.Host, values.CrossSite.StorageAPINodePort)
	moved := in.localEndpoint(ctx, c) != endpoint
	rel, err := chart.Apply(ctx, t, values)
	if err != nil {
		return "", fmt.Errorf("the chart: %w", err)
	}
	if moved {
		// A new site, or its node's address moved (a restarted dockerd hands
		// the node containers addresses in the order they start): the node
		// agent and the CSI driver read their own endpoint from the CSI
		// secret once, at their start, and the operator rewrites it only once
		// the chart's pods run -- restart them after it did, or the agent
		// asks whichever site has the old address now for its spec.
		if err := poll.Until(ctx, installLimit, func() (bool, string) {
			have := in.localEndpoint(ctx, c)
			return have == endpoint, fmt.Sprintf("the CSI secret names the site at %q, not %s yet", have, endpoint)
		}); err != nil {
			return "", err
		}
		if err := in.restartCSI(ctx, c); err != nil {
			return "", fmt.Errorf("restarting the CSI driver on the node's new address: %w", err)
		}
	}
	if err := in.siteReady(ctx, c); err != nil {
		return "", err
	}
	return fmt.Sprintf("release %s revision %d (%s)", rel.Name, rel.Version, image), nil
}

// installAwaitingHub installs the release of a site whose storage cluster
// the hub has not deployed yet: the node agent and the CSI driver mount the
// CSI secret the operator writes only for a storage cluster, so they wait
// for it, and the install waits for the operator alone, which the hub's
// discovery run needs.
func (in *Infra) installAwaitingHub(ctx context.Context, c Cluster, t chart.Target, values chart.Values) (string, error) {
	t.Wait = false
	rel, err := chart.Apply(ctx, t, values)
	if err != nil {
		return "", fmt.Errorf("the chart: %w", err)
	}
	clientset, _, err := in.Client(c)
	if err != nil {
		return "", err
	}
	if err := poll.Until(ctx, installLimit, func() (bool, string) {
		operator, err := clientset.AppsV1().Deployments("baton-system").Get(ctx, "baton-controller", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return operator.Status.AvailableReplicas >= 1, "the operator baton-controller is not Available yet"
	}); err != nil {
		return "", err
	}
	return fmt.Sprintf("release %s revision %d (%s), operator Available; its storage cluster awaits the hub", rel.Name, rel.Version, values.Image.Tag), nil
}

// siteReady waits until the site's storage cluster reports every storage
// node the mode places Ready and kubelet has registered the CSI driver on
// each of them (siteWaiting).
func (in *Infra) siteReady(ctx context.Context, c Cluster) error {
	clientset, _, err := in.Client(c)
	if err != nil {
		return err
	}
	objects, err := in.Objects(c)
	if err != nil {
		return err
	}
	storageNodes := in.Storage.StorageNodes(c)
	return poll.Until(ctx, installLimit, func() (bool, string) {
		var clusters v1.StorageClusterList
		if err := objects.List(ctx, &clusters, client.InNamespace("baton-system")); err != nil {
			return false, err.Error()
		}
		csiNodes, err := clientset.StorageV1().CSINodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		waiting := siteWaiting(storageNodes, clusters.Items, csiNodes.Items)
		return waiting == "", waiting
	})
}

// csiDriver is the name baton's CSI driver registers with kubelet.
const csiDriver = "csi.baton-dr.io"

// siteWaiting says what a site's readiness still waits for, "" once
// nothing: its storage cluster counting as many Ready nodes as the mode
// places storage nodes, and kubelet's registration of the CSI driver on
// each of those nodes (the node DaemonSet runs there: on the one node of a
// btrfs site, on a zfs-drbd site's storage workers, never its control
// plane).
func siteWaiting(storageNodes []string, clusters []v1.StorageCluster, csiNodes []storagev1.CSINode) string {
	if len(storageNodes) == 0 {
		panic("siteWaiting: a site without storage nodes")
	}
	if len(clusters) == 0 {
		return "the site has no storage cluster yet"
	}
	if ready := clusters[0].Status.ReadyNodeCount; int(ready) < len(storageNodes) {
		return fmt.Sprintf("the storage cluster has %d Ready nodes of %d (%s)", ready, len(storageNodes), strings.Join(storageNodes, ", "))
	}
	var unregistered []string
	for _, name := range storageNodes {
		registered := slices.ContainsFunc(csiNodes, func(n storagev1.CSINode) bool {
			return n.Name == name && slices.ContainsFunc(n.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == csiDriver })
		})
		if !registered {
			unregistered = append(unregistered, name)
		}
	}
	if len(unregistered) > 0 {
		return fmt.Sprintf("kubelet has not registered %s on %s yet", csiDriver, strings.Join(unregistered, ", "))
	}
	return ""
}

// Deploy installs baton's Helm chart (deploy/chart, through Helm's Go API)
// into both sites at once, then registers each site as the other's peer:
// the chart's peers, which each operator writes into its CSI secret
// (local: false); the CSI driver's pods that read the secret at their
// start are restarted where it changed.
//
// With OCM, HubDeployed's release has no storage cluster until the hub
// deploys one (batonctl realbed ocm deploy-storage): Deploy then stops
// after the installs, saying so, and Peers registers the peers after it.
func (in *Infra) Deploy(ctx context.Context, image string) error {
	ca, err := in.deployment(ctx, image)
	if err != nil {
		return err
	}
	if err := in.eachSite(func(c Cluster) error {
		return in.phase("install baton's chart in "+c.Name, func() (string, error) {
			values, err := in.values(ctx, c, image, ca, in.peersOf(ctx, c))
			if err != nil {
				return "", err
			}
			return in.install(ctx, c, image, values)
		})
	}); err != nil {
		return err
	}
	for _, c := range Sites() {
		if !in.byHub(c) {
			continue
		}
		if _, err := in.StorageClusterID(ctx, c); err != nil {
			in.Printf("%v; the peers follow it (batonctl realbed peers IMAGE)", err)
			return nil
		}
	}
	return in.registerPeers(ctx, image, ca)
}

// Peers registers each site as the other's peer once both run a storage
// cluster -- after the hub deployed HubDeployed's -- and restarts the CSI
// driver where its secret changed.
func (in *Infra) Peers(ctx context.Context, image string) error {
	ca, err := in.deployment(ctx, image)
	if err != nil {
		return err
	}
	if err := in.eachSite(func(c Cluster) error {
		return in.phase(c.Name+" ready", func() (string, error) {
			id, err := in.StorageClusterID(ctx, c)
			if err != nil {
				return "", err
			}
			return "storage cluster " + string(id), in.siteReady(ctx, c)
		})
	}); err != nil {
		return err
	}
	return in.registerPeers(ctx, image, ca)
}

// deployment checks the image and reads (or makes, once) the bed's CA.
func (in *Infra) deployment(ctx context.Context, image string) (*bedCA, error) {
	if err := checkImage(ctx, image, "ci/realbed/baton-image.sh"); err != nil {
		return nil, err
	}
	return loadOrMakeCA(in.Paths)
}

// registerPeers hands each site's own entry of its CSI secret to the other
// site's release as its peers, and restarts the CSI driver where that
// changed the secret.
func (in *Infra) registerPeers(ctx context.Context, image string, ca *bedCA) error {
	peers := map[string]chart.Peer{}
	for _, c := range Sites() {
		t, err := in.target(c)
		if err != nil {
			return err
		}
		values, err := in.values(ctx, c, image, ca, nil)
		if err != nil {
			return err
		}
		if err := poll.Until(ctx, installLimit, func() (bool, string) {
			peers[c.Name], err = chart.LocalPeer(ctx, t, values)
			return err == nil, fmt.Sprint(err)
		}); err != nil {
			return fmt.Errorf("%s: its own entry for the other site: %w", c.Name, err)
		}
	}
	var changed []Cluster
	if err := in.eachSite(func(c Cluster) error {
		return in.phase("register "+c.Name+"'s peer", func() (string, error) {
			var theirs []chart.Peer
			for _, other := range Sites() {
				if other.Name != c.Name {
					theirs = append(theirs, peers[other.Name])
				}
			}
			if slices.Equal(in.peersOf(ctx, c), theirs) {
				return "registered already", nil
			}
			values, err := in.values(ctx, c, image, ca, theirs)
			if err != nil {
				return "", err
			}
			what, err := in.install(ctx, c, image, values)
			if err != nil {
				return "", err
			}
			if err := poll.Until(ctx, installLimit, func() (bool, string) {
				doc, err := in.CSISecret(ctx, c)
				if err != nil {
					return false, err.Error()
				}
				return len(doc.IDs()) >= 2, "the operator has not written the peer into the CSI secret yet"
			}); err != nil {
				return "", err
			}
			changed = append(changed, c)
			return what, nil
		})
	}); err != nil {
		return err
	}
	return in.eachSite(func(c Cluster) error {
		if slices.ContainsFunc(changed, func(x Cluster) bool { return x.Name == c.Name }) {
			if err := in.phase("restart "+c.Name+"'s CSI driver on its new secret", func() (string, error) {
				return "", in.restartCSI(ctx, c)
			}); err != nil {
				return err
			}
		}
		return in.phase("csi-addons in "+c.Name, func() (string, error) { return in.addonsConnected(ctx, c) })
	})
}

// localEndpoint is the storage API endpoint the site's CSI secret names
// for the site itself; "" when it has none yet.
func (in *Infra) localEndpoint(ctx context.Context, c Cluster) string {
	doc, err := in.CSISecret(ctx, c)
	if err != nil {
		return ""
	}
	if local := doc.Local(); len(local) == 1 {
		e, _ := doc.Entry(local[0])
		return e.Endpoint
	}
	return ""
}

// peersOf are the peers the site's release lists now (none before its
// first install): a redeployment keeps them.
func (in *Infra) peersOf(ctx context.Context, c Cluster) []chart.Peer {
	doc, err := in.CSISecret(ctx, c)
	if err != nil {
		return nil
	}
	var out []chart.Peer
	for _, id := range doc.IDs() {
		if e, ok := doc.Entry(id); ok && !e.Local {
			out = append(out, chart.Peer{ClusterID: string(e.ID), Endpoint: e.Endpoint, Secret: e.Secret})
		}
	}
	return out
}
