package sim

import "fmt"

// checkPrimariesWritable holds the rule that nothing in the DR machinery
// fences the primary: while an application runs, no replica of the members it
// writes is read-only. A replica's disk that turns read-only under a running
// Primary does not fail the application's writes -- DRBD leaves that disk
// behind (sim/drbd: a refusing peer takes no more writes) and goes on with
// the others -- so the rule is checked on the pools themselves, at every
// step of the applications (a fence can last a reconcile or two).
func (w *World) checkPrimariesWritable() {
	for _, name := range w.appOrder {
		a := w.apps[name]
		if !a.running() {
			continue
		}
		for i, dataset := range a.datasets {
			v := a.volumes[i]
			for _, n := range w.Site(a.site).Nodes {
				info, err := n.Pool.Volume(dataset)
				if err != nil || !info.ReadOnly {
					continue
				}
				key := fmt.Sprintf("fenced primary %s %s", dataset, n.Endpoint)
				if w.reported[key] {
					continue
				}
				w.reported[key] = true
				w.violate("application: its primary is fenced", fmt.Sprintf(
					"%s writes %s (%s) on %s, whose replica on %s is read-only", a.spec.Name, v.name, dataset, a.node.Endpoint, n.Endpoint))
			}
		}
	}
}

// datasetsOf finds the pool volumes of the members a pod on n attached.
func (w *World) datasetsOf(n *Node, volumes []appVolume) []string {
	var out []string
	for _, v := range volumes {
		member, err := w.attachedMember(n, v.handle)
		if err != nil {
			return nil
		}
		out = append(out, "vol-"+member)
	}
	return out
}
