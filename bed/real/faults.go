package real

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/real/infra"
	"github.com/baton-dr/baton/reports"
)

// endpoint is the cluster a scoped name ("hub", "site-a") names.
func endpoint(name string) (infra.Cluster, error) {
	if name == bed.Hub {
		return infra.Hub, nil
	}
	for _, c := range infra.Sites() {
		if c.Site == name {
			return c, nil
		}
	}
	return infra.Cluster{}, fmt.Errorf("no endpoint %q on the real bed", name)
}

// applyCuts makes the node containers' network namespaces cut what cuts say
// (bed.Partitions' Apply): a NetworkChaos object (chaos.go) per cut
// chaosCuts names, injected with nftables (partition.go). A path between
// the hub and a site cut also stops the hub -- this process, which delivers
// Ramen's wishes -- reaching the site (Bed.reaches), for every bed of the
// process (inForce). Of each object it lifts it says first how many packets
// it dropped.
func (b *Bed) applyCuts(cuts []bed.Path) error {
	return inForce.change(b.chaosTable(), cuts, func() error {
		pairs, err := chaosCuts(cuts)
		if err != nil {
			return err
		}
		nodesOf, err := addressedNodes(context.Background())
		if err != nil {
			return err
		}
		objects, err := cutObjects(pairs, nodesOf)
		if err != nil {
			return err
		}
		b.tellLifted(objects)
		return applyChaos(b.chaosTable(), objects)
	}, time.Now)
}

// cutObjects are the NetworkChaos objects of the cuts, by name: each one
// selects every node of its from cluster and targets every node address
// of its to cluster (nodesOf, by cluster name), so that a cut holds
// whichever nodes the two sides' pods, agents and NodePorts use. A cluster
// without nodes is refused: its cut would cut nothing.
func cutObjects(cuts []chaosCut, nodesOf map[string][]nodeAddress) ([]chaosv1alpha1.NetworkChaos, error) {
	objects := make([]chaosv1alpha1.NetworkChaos, 0, len(cuts))
	for _, c := range cuts {
		from, to := nodesOf[c.from.Name], nodesOf[c.to.Name]
		if len(from) == 0 || len(to) == 0 {
			return nil, fmt.Errorf("cutting %s from %s: %s has %d nodes, %s %d", c.from.Name, c.to.Name, c.from.Name, len(from), c.to.Name, len(to))
		}
		var names, addresses []string
		for _, n := range from {
			names = append(names, n.name)
		}
		for _, n := range to {
			addresses = append(addresses, n.address)
		}
		objects = append(objects, partitionChaos(c.from, c.to, names, addresses, c.bothWays))
	}
	slices.SortFunc(objects, func(x, y chaosv1alpha1.NetworkChaos) int { return strings.Compare(x.Name, y.Name) })
	return objects, nil
}

// chaosCut is what one NetworkChaos object cuts: from's nodes drop what
// they send to to's nodes' addresses, and what they receive from there
// when both ways.
type chaosCut struct {
	from, to infra.Cluster
	bothWays bool
}

// chaosCuts are the objects' cuts that make the paths what cuts say: one a
// path cut, on the nodes of the endpoint that sends; where both paths between
// two endpoints are cut, one both ways on a site's nodes -- the first site's
// between the sites -- as the scenarios cut a site off ("partition site-a
// from hub"), so that its object is named for the site.
func chaosCuts(cuts []bed.Path) ([]chaosCut, error) {
	var out []chaosCut
	for i, c := range cuts {
		back := slices.Index(cuts, bed.Path{From: c.To, To: c.From})
		if back >= 0 && (c.From == bed.Hub || (c.To != bed.Hub && back < i)) {
			continue // the way back's object cuts both ways
		}
		from, err := endpoint(c.From)
		if err != nil {
			return nil, err
		}
		to, err := endpoint(c.To)
		if err != nil {
			return nil, err
		}
		out = append(out, chaosCut{from: from, to: to, bothWays: back >= 0})
	}
	return out, nil
}

// tellLifted puts on the timeline how many packets each object the nodes
// hold and kept does not name dropped: the evidence that the partition cut
// what it named.
func (b *Bed) tellLifted(kept []chaosv1alpha1.NetworkChaos) {
	dropped, err := droppedPackets(b.chaosTable())
	if err != nil {
		b.logf("", "reading the partitions' counters: %v", err)
		return
	}
	lifted := make([]string, 0, len(dropped))
	for name := range dropped {
		if !slices.ContainsFunc(kept, func(o chaosv1alpha1.NetworkChaos) bool { return o.Name == name }) {
			lifted = append(lifted, name)
		}
	}
	slices.Sort(lifted)
	for _, name := range lifted {
		b.event("", reports.EventPartition, "%s lifted: it dropped %d packets", name, dropped[name])
	}
}
