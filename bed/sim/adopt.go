package sim

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/placement"
)

var _ bed.ControlPlaneReplacer = (*World)(nil)

// ForgetResources: see bed.ControlPlaneReplacer.
func (w *World) ForgetResources(site string) error {
	defer w.unfaulted()()
	s := w.Site(site)
	if s.ControllerUp {
		return fmt.Errorf("%s/controller runs: its store is replaced while it is stopped", site)
	}
	volumes, err := s.Store.Volumes()
	if err != nil {
		return err
	}
	for _, v := range volumes {
		if err := s.Store.PutVolume(v.WithoutDRBDValues()); err != nil {
			return err
		}
	}
	w.event(site, reports.EventFault, "%s/controller's store keeps no DRBD values of its %d volumes (restored without them)",
		site, len(volumes))
	return nil
}

// ProvisionAgain: see bed.ControlPlaneReplacer.
func (w *World) ProvisionAgain(name string) ([]bed.Provisioned, error) {
	a, err := w.apps.App(name)
	if err != nil {
		return nil, err
	}
	s := w.Site(a.Site)
	var out []bed.Provisioned
	for i, spec := range a.Application.Volumes() {
		p := bed.Provisioned{Volume: spec.Name, Held: a.Volumes[i].Handle}
		resp, err := s.CSIController.CreateVolume(context.Background(), w.createRequest(name, spec))
		p.Answered, p.Err = resp.GetVolume().GetVolumeId(), err
		p.Retryable = status.Code(err) == codes.Unavailable
		out = append(out, p)
	}
	return out, nil
}

// Resources: see bed.ControlPlaneReplacer. It reads every up node's kernel
// (drbdsetup show), not the operator's records.
func (w *World) Resources(site string) (map[string]string, error) {
	s := w.Site(site)
	out := map[string]string{}
	if s.DRBD == nil {
		return out, nil
	}
	for _, n := range s.Nodes {
		if !n.Up {
			continue
		}
		volumes, err := n.Pool.Volumes()
		if err != nil {
			return nil, err
		}
		for _, v := range volumes {
			if !strings.HasPrefix(v.Name, "vol-") {
				continue
			}
			config, err := s.DRBD.Node(n.Name).Show(v.Name)
			if err != nil {
				continue // down on this node
			}
			text := fmt.Sprintf("port %d minor %d", config.Port, config.Minor)
			for _, r := range placement.AllocationOf(config).Replicas {
				text += fmt.Sprintf(" %s:%d", r.Node, r.NodeID)
			}
			if seen, ok := out[v.Name]; ok && seen != text {
				return nil, fmt.Errorf("%s runs %s on one node, %s on another", v.Name, seen, text)
			}
			out[v.Name] = text
		}
	}
	return out, nil
}

// Adoption: see bed.ControlPlaneReplacer.
func (w *World) Adoption(site string) (undecided, refused []string) {
	defer w.unfaulted()()
	s := w.Site(site)
	refs, err := s.Control.Undecided()
	if err != nil {
		return []string{err.Error()}, nil
	}
	for _, ref := range refs {
		undecided = append(undecided, ref.String())
	}
	for _, r := range s.adoption.Refused {
		refused = append(refused, fmt.Sprintf("%s: %v", r.Dataset, r.Err))
	}
	return undecided, refused
}

// Resyncs: see bed.ControlPlaneReplacer.
func (w *World) Resyncs(site string) int {
	if s := w.Site(site); s.DRBD != nil {
		return s.DRBD.Stats().Resyncs
	}
	return 0
}

// adoptUndecided is the operator's adoption as it starts: while a volume's
// record keeps no DRBD values, it asks every node's agent what the node
// holds and adopts it (core.Site.Adopt). A node it cannot reach may hold a
// replica: every adoption waits for it. What it adopted and refused are
// events, each once.
func (s *Site) adoptUndecided() {
	undecided, err := s.Control.Undecided()
	if err != nil || len(undecided) == 0 {
		return
	}
	w := s.world
	nodes, err := s.Store.Nodes()
	if err != nil {
		return
	}
	pools := map[string]backend.Provisioning{}
	for _, n := range nodes {
		pools[n.Name] = n.Provisioning
	}
	var inventories []core.Inventory
	for _, n := range s.Nodes {
		if !n.Up || !w.Net.Reachable(s.Operator(), n.Endpoint) || !w.Net.Reachable(n.Endpoint, s.Operator()) {
			return
		}
		inv, err := n.Agent.Inventory(pools[n.Name])
		if err != nil {
			w.Sim.Logf("adopt", "%s: %v", s.Name, err)
			return
		}
		inventories = append(inventories, inv)
	}
	report, err := s.Control.Adopt(inventories)
	if err != nil {
		w.Sim.Logf("adopt", "%s: %v", s.Name, err)
		return
	}
	if said := report.String(); said != s.adoption.String() {
		for _, line := range strings.Split(said, "\n") {
			w.event(s.Name, reports.EventAction, "%s", line)
		}
	}
	s.adoption = report
}
