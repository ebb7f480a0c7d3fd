package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/baton-dr/baton/bed"
)

// How long the hub's stories wait for a request to reach a phase, and how
// often they look.
const (
	discoveryLimit = 10 * time.Minute
	deployLimit    = 15 * time.Minute
	pollInterval   = 5 * time.Second
)

// hubDeploy deploys both sites' storage from the hub. The first site is
// discovered on one node, then on every node (a changed discovery: a new
// run), approved, and brought Online; the second is requested approved from
// the start. With chaos the hub loses the first site while it discovers and
// again after the approval. Withdrawing the first site's request leaves its
// storage cluster and nodes where they are, and a protected application runs
// on the storage the hub deployed.
func hubDeploy(s *Script) error {
	hub, err := bed.Can[bed.StorageHub](s.Bed, hubbing)
	if err != nil {
		return err
	}
	s.hub = hub
	sites := s.Bed.Sites()
	a, b := sites[0], sites[1]
	nodes := slices.Sorted(slices.Values(s.Bed.Nodes(a)))
	var first bed.Storage
	if err := s.phase("request both sites' storage from the hub; "+a+" discovers "+nodes[0], func() error {
		if err := s.hub.RequestStorage(bed.StorageRequest{Site: a, Nodes: nodes[:1]}); err != nil {
			return err
		}
		if err := s.hub.RequestStorage(bed.StorageRequest{Site: b, Approved: true}); err != nil {
			return err
		}
		if err := s.cutHub(a, 20*time.Second); err != nil {
			return err
		}
		var err error
		if first, err = s.awaitStorage(a, "Drafted", discoveryLimit); err != nil {
			return err
		}
		return sameNodes("the draft", first.Drafted, nodes[:1])
	}); err != nil {
		return err
	}
	if err := s.phase("widen "+a+"'s discovery to every node: a new run", func() error {
		if err := s.hub.RequestStorage(bed.StorageRequest{Site: a}); err != nil {
			return err
		}
		st, err := s.awaitStorageThat(a, "a draft of every node", discoveryLimit, func(st bed.Storage) bool {
			return st.Run != first.Run && st.Phase == "Drafted"
		})
		if err != nil {
			return err
		}
		if err := sameNodes("the new run's draft", st.Drafted, nodes); err != nil {
			return err
		}
		site, err := s.hub.SiteStorage(a)
		if err != nil {
			return err
		}
		if !slices.Contains(site.Runs, first.Run) || !slices.Contains(site.Runs, st.Run) {
			return fmt.Errorf("%s holds the runs %v, want the first (%s, orphaned by the work) and the new (%s)",
				a, site.Runs, first.Run, st.Run)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := s.phase("approve "+a+"'s draft: both sites Online", func() error {
		if err := s.hub.RequestStorage(bed.StorageRequest{Site: a, Approved: true}); err != nil {
			return err
		}
		if err := s.cutHub(a, 30*time.Second); err != nil {
			return err
		}
		for _, site := range sites {
			if err := s.online(site); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := s.phase("withdraw "+a+"'s request: its storage stays", func() error {
		before, err := s.hub.SiteStorage(a)
		if err != nil {
			return err
		}
		if err := s.hub.WithdrawStorage(a); err != nil {
			return err
		}
		if _, err := s.hub.RequestedStorage(a); !errors.Is(err, bed.ErrNoRequest) {
			return fmt.Errorf("the request for %s's storage after its withdrawal: %v", a, err)
		}
		if err := s.Bed.Run(time.Minute); err != nil {
			return err
		}
		after, err := s.hub.SiteStorage(a)
		if err != nil {
			return err
		}
		if after.Cluster != before.Cluster || after.ClusterID != before.ClusterID || !slices.Equal(after.Nodes, before.Nodes) ||
			!slices.Equal(after.Runs, before.Runs) {
			return fmt.Errorf("withdrawing the request changed %s's storage: %+v, then %+v", a, before, after)
		}
		return nil
	}); err != nil {
		return err
	}
	return deployAndProtect(s)
}

// online waits until the site's request is Online and checks it against the
// site: the cluster's UUID, pool and nodes as the site holds them, every node
// Ready.
func (s *Script) online(site string) error {
	st, err := s.awaitStorage(site, "Online", deployLimit)
	if err != nil {
		return err
	}
	held, err := s.hub.SiteStorage(site)
	if err != nil {
		return err
	}
	nodes := slices.Sorted(slices.Values(s.Bed.Nodes(site)))
	switch {
	case st.ClusterID == "" || st.ClusterID != held.ClusterID:
		return fmt.Errorf("%s is Online with the cluster %q; the site's StorageCluster is %q", site, st.ClusterID, held.ClusterID)
	case st.Pool == "" || st.Pool != held.Pool:
		return fmt.Errorf("%s is Online on the pool %q; the site's is %q", site, st.Pool, held.Pool)
	case !slices.Equal(st.Nodes, nodes) || !slices.Equal(held.Nodes, nodes):
		return fmt.Errorf("%s is Online with the nodes %v (the site holds %v), want %v", site, st.Nodes, held.Nodes, nodes)
	case st.ReadyNodes != len(nodes):
		return fmt.Errorf("%s is Online with %d of %d nodes Ready", site, st.ReadyNodes, len(nodes))
	}
	return nil
}

// awaitStorage lets time pass until the site's request is in phase; a request
// that Failed ends the wait with the site's reason.
func (s *Script) awaitStorage(site, phase string, limit time.Duration) (bed.Storage, error) {
	return s.awaitStorageThat(site, phase, limit, func(st bed.Storage) bool { return st.Phase == phase })
}

func (s *Script) awaitStorageThat(site, what string, limit time.Duration, done func(bed.Storage) bool) (bed.Storage, error) {
	var st bed.Storage
	for waited := time.Duration(0); ; waited += pollInterval {
		var err error
		st, err = s.hub.RequestedStorage(site)
		if err != nil {
			return st, err
		}
		switch {
		case done(st):
			return st, nil
		case st.Phase == "Failed":
			return st, fmt.Errorf("the request for %s's storage Failed: %s", site, st.Reason)
		case waited >= limit:
			return st, fmt.Errorf("the request for %s's storage is still %s (run %s) after %s, waiting for %s",
				site, st.Phase, st.Run, limit, what)
		}
		if err := s.Bed.Run(pollInterval); err != nil {
			return st, err
		}
	}
}

func sameNodes(what string, got, want []string) error {
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s names the nodes %v, want %v", what, got, want)
	}
	return nil
}
