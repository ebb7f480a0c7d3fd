package infra

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEachClustersKindConfigHasItsOwnRanges(t *testing.T) {
	paths := Paths{Cache: "/cache/realbed"}
	pods, services := map[string]string{}, map[string]string{}
	for _, c := range Clusters() {
		config := kindConfig(c, paths, StorageBtrfs)
		n := config.Networking
		if !n.DisableDefaultCNI || n.PodSubnet != c.PodSubnet.String() || n.ServiceSubnet != c.ServiceSubnet.String() {
			t.Errorf("%s: networking %+v", c.Name, n)
		}
		if other, ok := pods[n.PodSubnet]; ok {
			t.Errorf("%s and %s share the pod subnet %s", c.Name, other, n.PodSubnet)
		}
		if other, ok := services[n.ServiceSubnet]; ok {
			t.Errorf("%s and %s share the service subnet %s", c.Name, other, n.ServiceSubnet)
		}
		pods[n.PodSubnet], services[n.ServiceSubnet] = c.Name, c.Name
		mounts := config.Nodes[0].ExtraMounts
		hasDev := false
		for _, m := range mounts {
			hasDev = hasDev || m.ContainerPath == "/dev"
		}
		if hasDev != (c.Site != "") {
			t.Errorf("%s: mounts the host's /dev: %v (only sites do)", c.Name, hasDev)
		}
		data, err := cniConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Plugins []struct {
				IPAM struct {
					Ranges [][]struct{ Subnet string }
				}
			}
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if got := doc.Plugins[0].IPAM.Ranges[0][0].Subnet; got != c.NodePodCIDR().String() {
			t.Errorf("%s: the CNI config hands out %s, not the node's %s", c.Name, got, c.NodePodCIDR())
		}
	}
}

func TestTheLackingLineSaysWhatTheFactsLack(t *testing.T) {
	none := Facts{}
	line := none.Lacking()
	for _, want := range []string{"DRBD and ZFS", "OCM on the hub", "baton-hub", "baton-site-a has no csi-addons", "baton-site-b's CSI secret registers no peer"} {
		if !strings.Contains(line, want) {
			t.Errorf("with nothing, the line lacks %q: %s", want, line)
		}
	}
	all := Facts{ZFS: true, DRBD: true, HubOCM: true, HubController: true,
		CSIAddons: map[string]bool{SiteA.Name: true, SiteB.Name: true}, Peers: map[string]bool{SiteA.Name: true, SiteB.Name: true}}
	if line := all.Lacking(); line != "" {
		t.Errorf("with everything, the line says %q", line)
	}
	peered := all
	peered.Peers = map[string]bool{SiteA.Name: true}
	if line := peered.Lacking(); line != "baton-site-b's CSI secret registers no peer site (no cross-site replication)" {
		t.Errorf("one site unpeered: %q", line)
	}
}
