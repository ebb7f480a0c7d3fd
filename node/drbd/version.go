package drbd

import (
	"fmt"
	"strings"
)

// Version is the DRBD kernel module's generation: the tools take different
// configuration files and print different status for each.
type Version uint8

const (
	// V84 is DRBD 8.4: two nodes per resource, `drbdsetup status` names the
	// one connection "peer", `drbdsetup show` prints _this_host/_remote_host.
	V84 Version = iota + 1
	// V9 is DRBD 9: a mesh of up to 32 nodes with node-ids. Driven with its
	// own resource file (node-id per node, connection-mesh, fencing under
	// net, auto-promote no), `show` layout (connection { _peer_node_id;
	// path { _this_host; _remote_host; } }), status from `drbdsetup events2
	// --now` (connections by peer-node-id and conn-name) and role changes by
	// resource name. Untested against a real DRBD 9 module: see the package
	// doc.
	V9
)

func (v Version) String() string {
	switch v {
	case V84:
		return "8.4"
	case V9:
		return "9"
	}
	return "Version(?)"
}

// parseProcVersion reads the module's version from /proc/drbd's first line:
// "version: 8.4.11 (api:1/proto:86-101)".
func parseProcVersion(procDRBD []byte) (Version, error) {
	first, _, _ := strings.Cut(string(procDRBD), "\n")
	rest, ok := strings.CutPrefix(first, "version: ")
	if !ok {
		return 0, fmt.Errorf("/proc/drbd does not start with its version: %q", first)
	}
	switch {
	case strings.HasPrefix(rest, "8.4."):
		return V84, nil
	case strings.HasPrefix(rest, "9."):
		return V9, nil
	}
	return 0, fmt.Errorf("DRBD %q is neither 8.4 nor 9", rest)
}

// ParseProcVersion reads the module's version from /proc/drbd's contents, as
// New does: for a preflight that reads the host's /proc/drbd before any node
// agent runs (the real bed's zfs-drbd mode).
func ParseProcVersion(procDRBD []byte) (Version, error) { return parseProcVersion(procDRBD) }
