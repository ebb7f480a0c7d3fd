package scenarios

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
)

// boundary injects, at the start of a phase, the faults of this chaos
// point: drawn with the seed's odds under Chaos, or the schedule's. Each
// fault ends by itself within a few minutes -- the next action must
// complete through it. The classes (FaultClasses) and their odds out of
// eight when drawn:
//
//   - 2/8 a partition between two of the hub and the sites, one- or two-way;
//   - 1/8 a slow and unreliable link between the sites (API calls time out,
//     streams are lost, repeated and overtaken);
//   - 1/8 a crash and restart of a site's operator;
//   - 1/8 a crash and restart of a storage node (the application's pod on
//     it moves to another node of its site);
//   - 1/8 a full disk: a storage node's pool filled by a runaway writer, then
//     freed (the application's writes there fail and it restarts; snapshots,
//     receives and clones needing space are refused);
//   - 1/8 API errors: the storage API and the API server of a site or the
//     hub's fail a share of calls with 500, 503, 429, 409 and lost answers;
//   - 1/8 store faults: a site's record store fails a share of its writes,
//     half after they took effect (multi-record changes stop half-way).
//
// A fault the bed cannot inject (bed.Can) fails the phase: a run that asked
// for chaos never passes believing the fault happened. Every fault at a
// boundary counts as a disturbance of replication (s.faults) for the RPO
// bound of a later fail-over.
func (s *Script) boundary(phase string) error {
	if !s.Chaos && s.schedule == nil {
		return nil
	}
	point := s.point("start of " + phase)
	if s.schedule != nil {
		for _, f := range s.scheduledAt(point) {
			start := s.Bed.Now()
			err := s.inject(f, false)
			s.faults = append(s.faults, bed.Window{Start: start, End: s.Bed.Now()})
			if err != nil {
				return err
			}
		}
		return nil
	}
	if s.rng.IntN(3) != 0 {
		return nil
	}
	start := s.Bed.Now()
	// A drawn partition of an endpoint from itself injects nothing but
	// still counts as a (momentary) disturbance: the runs before schedules
	// existed did so, and their verdicts stay.
	defer func() { s.faults = append(s.faults, bed.Window{Start: start, End: s.Bed.Now()}) }()
	f, drawn := s.draw(point)
	if !drawn {
		return nil
	}
	return s.inject(f, false)
}

// cutHub, with chaos, partitions the hub from a site a moment after a step
// (within window), for a while, then heals: what the hub writes meanwhile
// must wait for the heal. With a schedule it injects the schedule's faults
// of this point instead. A hub cut does not disturb replication between the
// sites, so it adds no RPO disturbance.
func (s *Script) cutHub(site string, window time.Duration) error {
	if !s.Chaos && s.schedule == nil {
		return nil
	}
	point := s.point("hub cut from " + site + " in " + s.current)
	if s.schedule != nil {
		for _, f := range s.scheduledAt(point) {
			if err := s.inject(f, true); err != nil {
				return err
			}
		}
		return nil
	}
	offset := time.Duration(s.rng.Int64N(int64(window)))
	duration := time.Duration(20+s.rng.IntN(160)) * time.Second
	bothWays := s.rng.IntN(2) == 0
	return s.inject(Fault{At: point, Phase: s.points[point], Kind: FaultPartition, Target: "hub", Peer: site,
		BothWays: bothWays, Delay: Span(offset), Duration: Span(duration)}, true)
}

// point counts a chaos point the run reached and returns its number.
func (s *Script) point(name string) int {
	s.points = append(s.points, name)
	return len(s.points) - 1
}

// scheduledAt are the schedule's faults at a point, in schedule order.
func (s *Script) scheduledAt(point int) []Fault {
	var at []Fault
	for _, f := range s.schedule.Faults {
		if f.At == point {
			at = append(at, f)
		}
	}
	return at
}

// draw draws a boundary's fault from rng, in the order the draws always
// came: its duration, its class, then the class's own. drawn is false for a
// partition of an endpoint from itself, which injects nothing.
func (s *Script) draw(point int) (f Fault, drawn bool) {
	sites := s.Bed.Sites()
	endpoints := append([]string{"hub"}, sites...)
	duration := time.Duration(10+s.rng.IntN(170)) * time.Second
	f = Fault{At: point, Phase: s.points[point], Duration: Span(duration)}
	switch s.rng.IntN(8) {
	case 4:
		f.Kind, f.Target, f.Peer = FaultDegradedLink, sites[0], sites[1]
		f.Link = &LinkDegradation{ExtraLatency: Span(time.Duration(s.rng.IntN(500)) * time.Millisecond),
			BandwidthBytesPerSecond: uint64(1+s.rng.IntN(10)) << 20, Loss: float64(s.rng.IntN(30)) / 100,
			Duplicate: float64(s.rng.IntN(20)) / 100, Reorder: float64(s.rng.IntN(20)) / 100}
	case 0, 1:
		a, b := endpoints[s.rng.IntN(len(endpoints))], endpoints[s.rng.IntN(len(endpoints))]
		if a == b {
			return f, false
		}
		f.Kind, f.Target, f.Peer, f.BothWays = FaultPartition, a, b, s.rng.IntN(2) == 0
	case 2:
		f.Kind, f.Target = FaultOperatorCrash, sites[s.rng.IntN(len(sites))]
	case 3:
		f.Kind = FaultNodeCrash
		f.Target, f.Node = s.node(sites)
	case 5:
		f.Kind = FaultDiskFull
		f.Target, f.Node = s.node(sites)
	case 6:
		f.Kind, f.Target = FaultAPIErrors, endpoints[s.rng.IntN(len(endpoints))]
		f.Rate = float64(10+s.rng.IntN(41)) / 100
	case 7:
		f.Kind, f.Target = FaultStoreFaults, sites[s.rng.IntN(len(sites))]
		f.Rate = float64(10+s.rng.IntN(41)) / 100
	}
	return f, true
}

// node draws a site and one of its storage nodes.
func (s *Script) node(sites []string) (site, node string) {
	site = sites[s.rng.IntN(len(sites))]
	nodes := s.Bed.Nodes(site)
	return site, nodes[s.rng.IntN(len(nodes))]
}

// inject makes one fault, lets it last, and undoes it. At a hub cut the
// delay always runs, as the cut always waited its offset.
func (s *Script) inject(f Fault, atCut bool) error {
	if atCut || f.Delay > 0 {
		if err := s.Bed.Run(time.Duration(f.Delay)); err != nil {
			return err
		}
	}
	undo, err := s.apply(f)
	if err != nil {
		return err
	}
	s.injected = append(s.injected, f)
	err = s.Bed.Run(time.Duration(f.Duration))
	undo()
	return err
}

// apply makes the fault and returns what undoes it; a class the bed cannot
// make is an error (bed.Can).
func (s *Script) apply(f Fault) (undo func(), err error) {
	can, known := faultCapability[f.Kind]
	if !known {
		return nil, fmt.Errorf("a fault of the unknown kind %q", f.Kind)
	}
	if err := can(s.Bed); err != nil {
		return nil, err
	}
	switch f.Kind {
	case FaultPartition:
		s.Bed.Partition(f.Target, f.Peer, f.BothWays)
		return func() { s.Bed.Heal(f.Target, f.Peer) }, nil
	case FaultDegradedLink:
		link := s.Bed.(bed.LinkDegrader)
		link.Degrade(f.Link.degradation())
		return link.Restore, nil
	case FaultOperatorCrash:
		crasher := s.Bed.(bed.ControllerCrasher)
		crasher.CrashController(f.Target)
		return func() { crasher.RestartController(f.Target) }, nil
	case FaultNodeCrash:
		crasher := s.Bed.(bed.NodeCrasher)
		crasher.CrashNode(f.Target, f.Node)
		return func() {
			if err := crasher.RestartNode(f.Target, f.Node); err != nil {
				s.result.Phases = append(s.result.Phases, reports.Phase{Name: "restart " + f.Node, OK: false, Note: err.Error()})
			}
		}, nil
	case FaultDiskFull:
		filler := s.Bed.(bed.PoolFiller)
		filler.FillPool(f.Target, f.Node)
		return func() { filler.FreePool(f.Target, f.Node) }, nil
	case FaultAPIErrors:
		failer := s.Bed.(bed.APIFailer)
		failer.FailAPI(f.Target, f.Rate)
		return func() { failer.HealAPI(f.Target) }, nil
	case FaultStoreFaults:
		stores := s.Bed.(bed.StoreFailer)
		stores.FailStore(f.Target, f.Rate)
		return func() { stores.HealStore(f.Target) }, nil
	}
	panic(fmt.Sprintf("fault kind %q has a capability but no injection", f.Kind))
}

func (l *LinkDegradation) degradation() bed.Degradation {
	return bed.Degradation{ExtraLatency: time.Duration(l.ExtraLatency), BandwidthBytesPerSecond: l.BandwidthBytesPerSecond,
		Loss: l.Loss, Duplicate: l.Duplicate, Reorder: l.Reorder}
}
