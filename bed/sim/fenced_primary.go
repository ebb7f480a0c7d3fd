package sim

import (
	"fmt"

	"github.com/baton-dr/baton/bed/apps"
)

// checkPrimariesWritable holds the rule that nothing in the DR machinery
// fences the primary: while an application runs, no replica of the members it
// writes is read-only. A replica's disk that turns read-only under a running
// Primary does not fail the application's writes -- DRBD leaves that disk
// behind (sim/drbd: a refusing peer takes no more writes) and goes on with
// the others -- so the rule is checked on the pools themselves, at every
// step of the applications (a fence can last a reconcile or two).
func (w *World) checkPrimariesWritable() {
	for _, a := range w.apps.All() {
		if !a.Running() {
			continue
		}
		p := podOf(a)
		for i, dataset := range p.datasets {
			v := a.Volumes[i]
			for _, n := range w.Site(a.Site).Nodes {
				info, err := n.Pool.Volume(dataset)
				if err != nil || !info.ReadOnly {
					continue
				}
				key := fmt.Sprintf("fenced primary %s %s", dataset, n.Endpoint)
				if !w.FirstReport(key) {
					continue
				}
				w.violate("application: its primary is fenced", fmt.Sprintf(
					"%s writes %s (%s) on %s, whose replica on %s is read-only", a.Spec.Name, v.Name, dataset, p.node.Endpoint, n.Endpoint))
			}
		}
	}
}

// datasetsOf finds the pool volumes of the members a pod on n attached.
func (w *World) datasetsOf(n *Node, volumes []apps.Volume) []string {
	var out []string
	for _, v := range volumes {
		member, err := w.attachedMember(n, v.Handle)
		if err != nil {
			return nil
		}
		out = append(out, "vol-"+member)
	}
	return out
}
