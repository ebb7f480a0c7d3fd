package placement

import (
	"fmt"
	"slices"
)

// MaxMinor is the largest minor number Linux gives a block device (20 bits).
const MaxMinor = 1<<20 - 1

// Ranges are the DRBD values a node may use, inclusive at both ends. Zero is
// never a valid port or minor: zero means "unset" in records and probes.
type Ranges struct {
	FirstPort, LastPort   uint16
	FirstMinor, LastMinor uint32
}

// DefaultRanges are LINSTOR's defaults, which a cluster migrating from LINSTOR
// already runs on: TcpPortAutoRange 7000-7999 and MinorNrAutoRange 1000-49999.
// (Blockstor's own minor default starts at 20000; a site that wants it says so.)
func DefaultRanges() Ranges {
	return Ranges{FirstPort: 7000, LastPort: 7999, FirstMinor: 1000, LastMinor: 49999}
}

// String reads like "ports 7000-7999, minors 1000-49999".
func (r Ranges) String() string {
	return fmt.Sprintf("ports %d-%d, minors %d-%d", r.FirstPort, r.LastPort, r.FirstMinor, r.LastMinor)
}

func (r Ranges) validate() error {
	if r.FirstPort == 0 || r.FirstPort > r.LastPort {
		return fmt.Errorf("%w: port range %d-%d", ErrInvalidInput, r.FirstPort, r.LastPort)
	}
	if r.FirstMinor == 0 || r.FirstMinor > r.LastMinor || r.LastMinor > MaxMinor {
		return fmt.Errorf("%w: minor range %d-%d (minors are 1..%d)", ErrInvalidInput, r.FirstMinor, r.LastMinor, MaxMinor)
	}
	return nil
}

func (r Ranges) holdsPort(port uint16) bool {
	return r.FirstPort <= port && port <= r.LastPort
}

func (r Ranges) holdsMinor(minor uint32) bool {
	return r.FirstMinor <= minor && minor <= r.LastMinor
}

// intersect narrows r to what both allow. An empty intersection shows as a
// first value above the last.
func (r Ranges) intersect(other Ranges) Ranges {
	return Ranges{
		FirstPort: max(r.FirstPort, other.FirstPort), LastPort: min(r.LastPort, other.LastPort),
		FirstMinor: max(r.FirstMinor, other.FirstMinor), LastMinor: min(r.LastMinor, other.LastMinor),
	}
}

// Config is the site's DRBD configuration: the default ranges, and the nodes
// that override them (LINSTOR's per-node TcpPortRange / MinorNrRange).
type Config struct {
	Default Ranges
	Nodes   map[string]Ranges
}

// DefaultConfig uses DefaultRanges on every node.
func DefaultConfig() Config {
	return Config{Default: DefaultRanges()}
}

// RangesOf returns the ranges a node may use.
func (c Config) RangesOf(node string) Ranges {
	if r, ok := c.Nodes[node]; ok {
		return r
	}
	return c.Default
}

func (c Config) validate() error {
	if err := c.Default.validate(); err != nil {
		return fmt.Errorf("default ranges: %w", err)
	}
	for _, node := range sortedKeys(c.Nodes) {
		if err := c.Nodes[node].validate(); err != nil {
			return fmt.Errorf("ranges of node %q: %w", node, err)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
