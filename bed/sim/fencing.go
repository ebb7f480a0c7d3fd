package sim

import (
	"context"

	"github.com/baton-dr/baton/reports"
)

// Node fencing. When a pod is lost with its node, the bed plays the
// administrator (or fencing operator) of non-graceful node shutdown: it
// taints the node out-of-service once it is known down, which lets
// Kubernetes move the pod, and removes the taint when the node is back. The
// site operator turns the taint into the storage node's fence at its next
// tick while it runs -- as its Node watch does -- so that the replica on the
// pod's new node may be promoted without the crashed one.

// taint puts the out-of-service taint on a node, or takes it off.
func (s *Site) taint(node string, outOfService bool) {
	if s.outOfService[node] == outOfService {
		return
	}
	s.outOfService[node] = outOfService
	verb := "untaint"
	if outOfService {
		verb = "taint"
	}
	s.world.event(s.Name, reports.EventFault, "%s %s/%s out-of-service", verb, s.Name, node)
}

// syncFences is the operator's node-fencing reconciler: through the site's
// control plane, as the operator's (controllers/site, NodeFencingReconciler).
func (s *Site) syncFences() {
	for _, n := range s.Nodes {
		if err := s.API.FenceNode(context.Background(), n.Name, s.outOfService[n.Name]); err != nil {
			s.world.Sim.Logf("error", "%s fence %s: %v", s.Name, n.Name, err)
		}
	}
}
