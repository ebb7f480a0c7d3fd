package site

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// NodeCandidates is what one node's agent reports to a discovery: the node's
// labels and address, and the devices it could give a pool.
type NodeCandidates struct {
	Name    string               `json:"name"`
	Labels  map[string]string    `json:"labels,omitempty"`
	Address string               `json:"address,omitempty"`
	Devices []v1.CandidateDevice `json:"devices,omitempty"`
}

// ErrMalformedCandidates reports a candidate list that does not parse or
// breaks its rules.
var ErrMalformedCandidates = errors.New("malformed node candidates")

// ParseCandidates reads a JSON list of NodeCandidates (the beds' discovery
// file): names unique and non-empty, device paths absolute, sizes not negative.
func ParseCandidates(data []byte) ([]NodeCandidates, error) {
	var nodes []NodeCandidates
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&nodes); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedCandidates, err)
	}
	if decoder.More() {
		return nil, fmt.Errorf("%w: trailing data after the list", ErrMalformedCandidates)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if n.Name == "" || seen[n.Name] {
			return nil, fmt.Errorf("%w: node name %q is empty or repeated", ErrMalformedCandidates, n.Name)
		}
		seen[n.Name] = true
		for _, d := range n.Devices {
			if !strings.HasPrefix(d.Path, "/") || d.SizeBytes < 0 {
				return nil, fmt.Errorf("%w: node %s: device %q of %d bytes", ErrMalformedCandidates, n.Name, d.Path, d.SizeBytes)
			}
		}
	}
	return nodes, nil
}

// Discoverer asks the site's nodes for their candidate devices. Production
// asks each node agent; the tests and the beds answer from a list.
type Discoverer interface {
	Candidates(ctx context.Context) ([]NodeCandidates, error)
}

// StaticDiscoverer answers with a fixed list.
type StaticDiscoverer []NodeCandidates

func (d StaticDiscoverer) Candidates(context.Context) ([]NodeCandidates, error) {
	return slices.Clone(d), nil
}

// Loop files offered on nodes without a candidate disk, when a run allows them.
const (
	LoopFilePath      = "/var/lib/baton/pool0.img"
	LoopFileSizeBytes = 20 << 30
)

// discover applies a run's filters to what the nodes reported: the nodes it
// selects, each with the devices it may use, sorted by name and path. A node
// left without a device (none matches and loop files are not allowed) is left
// out: it cannot carry a pool.
func discover(spec v1.OperatorOpsSpec, candidates []NodeCandidates) []v1.DiscoveredNode {
	var out []v1.DiscoveredNode
	for _, n := range candidates {
		if !selected(spec, n) {
			continue
		}
		var devices []v1.CandidateDevice
		for _, d := range n.Devices {
			if deviceMatches(spec.Devices, d) {
				devices = append(devices, d)
			}
		}
		if len(devices) == 0 && spec.Devices.AllowLoopFiles {
			devices = []v1.CandidateDevice{{Path: LoopFilePath, Type: v1.DeviceTypeLoopFile, SizeBytes: LoopFileSizeBytes}}
		}
		if len(devices) == 0 {
			continue
		}
		slices.SortFunc(devices, func(a, b v1.CandidateDevice) int { return cmp.Compare(a.Path, b.Path) })
		out = append(out, v1.DiscoveredNode{Name: n.Name, Address: n.Address, Devices: devices})
	}
	slices.SortFunc(out, func(a, b v1.DiscoveredNode) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func selected(spec v1.OperatorOpsSpec, n NodeCandidates) bool {
	if len(spec.NodeNames) > 0 && !slices.Contains(spec.NodeNames, n.Name) {
		return false
	}
	for key, value := range spec.NodeSelector {
		if n.Labels[key] != value {
			return false
		}
	}
	return true
}

func deviceMatches(filter v1.DeviceFilter, d v1.CandidateDevice) bool {
	if d.Type == v1.DeviceTypeLoopFile || d.SizeBytes < filter.MinSizeBytes {
		return false // loop files are proposed by the run, never taken from a node's report
	}
	if len(filter.Paths) == 0 {
		return true
	}
	return slices.ContainsFunc(filter.Paths, func(pattern string) bool {
		ok, err := path.Match(pattern, d.Path)
		return err == nil && ok
	})
}

// nodeSets groups discovered nodes by their device layout: the nodes of a set
// put the same paths in their pools. Sets are named set-1, set-2, ... in the
// order of their first node's name, so a run's draft is the same every time.
func nodeSets(nodes []v1.DiscoveredNode) []v1.NodeSet {
	var sets []v1.NodeSet
	for _, n := range nodes {
		paths := make([]string, 0, len(n.Devices))
		for _, d := range n.Devices {
			paths = append(paths, d.Path)
		}
		i := slices.IndexFunc(sets, func(s v1.NodeSet) bool { return slices.Equal(s.Devices, paths) })
		if i < 0 {
			sets = append(sets, v1.NodeSet{Devices: paths})
			i = len(sets) - 1
		}
		sets[i].Nodes = append(sets[i].Nodes, n.Name)
	}
	for i := range sets {
		sets[i].Name = fmt.Sprintf("set-%d", i+1)
	}
	return sets
}

// describeNodes names nodes for a message, briefly.
func describeNodes(names []string) string {
	const shown = 5
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}
