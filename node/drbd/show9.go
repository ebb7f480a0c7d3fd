package drbd

import (
	"fmt"
	"strconv"
)

// livePeer is one connection of a DRBD 9 resource as the kernel runs it.
// DRBD 9's kernel knows its peers' node-ids and the connections' names
// (drbdadm names each after the peer's "on" section); 8.4's knows neither.
type livePeer struct {
	nodeID uint8
	name   string // "" when the connection has no _name
}

// parseShow9 reads DRBD 9's `drbdsetup show <res>`. The layout is
// drbdsetup's show_resource_list, show_connection and print_paths
// (user/v9/drbdsetup.c in drbd-utils 9), as in drbd-utils'
// tests/v9/drbdsetup_show_*.txt:
//
//	resource "r0" {
//	    options { auto-promote no; }
//	    _this_host {
//	        node-id 0;
//	        volume 0 { device minor 0; disk "/dev/zvol/tank/r0"; meta-disk internal; }
//	    }
//	    connection {
//	        _peer_node_id 1;
//	        path { _this_host ipv4 10.99.0.1:7789; _remote_host ipv4 10.99.0.2:7789; }
//	        _cstate Connected;
//	        net { _name "nodeb"; }
//	    }
//	}
//
// The node's own address is no longer in _this_host but in each path; baton
// writes one address per node, so every path must leave from the same one. A
// connection without a path (drbdadm up stopped between new-peer and
// new-path) is a peer without an address, the zero address, which no
// configuration matches; several paths to one peer are no configuration
// baton writes, and refused.
func parseShow9(text string) (liveConfig, error) {
	resource, live, err := showResource(text)
	if err != nil {
		return liveConfig{}, err
	}
	if !safeName.MatchString(live.name) {
		return liveConfig{}, fmt.Errorf("drbdsetup show printed resource %q, no name baton gives", live.name)
	}
	this, ok := find(resource.block, "_this_host")
	if !ok || !this.isBlock {
		return liveConfig{}, fmt.Errorf("drbdsetup show of %s has no _this_host", live.name)
	}
	if live.nodeID, err = showNodeID(this.block, "node-id", live.name); err != nil {
		return liveConfig{}, err
	}
	if err := readShowVolume(this.block, &live); err != nil {
		return liveConfig{}, err
	}
	for i, connection := range findAll(resource.block, "connection") {
		if i == maxConnections {
			return liveConfig{}, fmt.Errorf("drbdsetup show of %s lists more than %d connections", live.name, maxConnections)
		}
		if !connection.isBlock {
			return liveConfig{}, fmt.Errorf("drbdsetup show of %s has a connection that is no block", live.name)
		}
		if err := readShowConnection(connection.block, &live); err != nil {
			return liveConfig{}, err
		}
	}
	return live, nil
}

// readShowVolume reads the minor and backing disk of _this_host's first
// volume; DRBD 9 prints "disk none;" for a node that is diskless on purpose.
func readShowVolume(this []stanza, live *liveConfig) error {
	volume, ok := find(this, "volume")
	if !ok || !volume.isBlock {
		return fmt.Errorf("drbdsetup show of %s has no volume", live.name)
	}
	device, ok := find(volume.block, "device", "minor")
	if !ok || len(device.words) != 3 {
		return fmt.Errorf("drbdsetup show of %s has no minor", live.name)
	}
	minor, err := strconv.ParseUint(device.words[2], 10, 32)
	if err != nil {
		return fmt.Errorf("drbdsetup show of %s: minor %q", live.name, device.words[2])
	}
	live.minor = uint32(minor)
	if disk, ok := diskOf(volume.block); ok && disk != "none" {
		live.disk = disk
	}
	return nil
}

// readShowConnection reads one connection: the peer's node-id and name, and
// the addresses of its one path.
func readShowConnection(connection []stanza, live *liveConfig) error {
	nodeID, err := showNodeID(connection, "_peer_node_id", live.name)
	if err != nil {
		return err
	}
	peer := livePeer{nodeID: nodeID}
	if net, ok := find(connection, "net"); ok && net.isBlock {
		if s, ok := find(net.block, "_name"); ok && len(s.words) == 2 {
			peer.name = s.words[1]
		}
	}
	paths := findAll(connection, "path")
	var remote address
	switch {
	case len(paths) > 1:
		return fmt.Errorf("drbdsetup show of %s has %d paths to node-id %d; baton configures one", live.name, len(paths), nodeID)
	case len(paths) == 1:
		local, err := pathAddress(paths[0], "_this_host", live.name)
		if err != nil {
			return err
		}
		if remote, err = pathAddress(paths[0], "_remote_host", live.name); err != nil {
			return err
		}
		if live.local != (address{}) && live.local != local {
			return fmt.Errorf("drbdsetup show of %s has paths from %s and from %s; baton configures one address per node", live.name, live.local, local)
		}
		live.local = local
	}
	live.peers = append(live.peers, peer)
	live.peerAddresses = append(live.peerAddresses, remote)
	return nil
}

// showNodeID reads a node-id statement ("node-id 1;", "_peer_node_id 1;").
func showNodeID(block []stanza, key, resource string) (uint8, error) {
	s, ok := find(block, key)
	if !ok || s.isBlock || len(s.words) != 2 {
		return 0, fmt.Errorf("drbdsetup show of %s has no %s", resource, key)
	}
	id, err := strconv.ParseUint(s.words[1], 10, 8)
	if err != nil || id > maxNodeID9 {
		return 0, fmt.Errorf("drbdsetup show of %s: %s %q", resource, key, s.words[1])
	}
	return uint8(id), nil
}

// pathAddress reads "_this_host ipv4 10.0.0.1:7789;" of a path block.
func pathAddress(path stanza, key, resource string) (address, error) {
	if !path.isBlock {
		return address{}, fmt.Errorf("drbdsetup show of %s has a path that is no block", resource)
	}
	s, ok := find(path.block, key)
	if !ok || s.isBlock {
		return address{}, fmt.Errorf("drbdsetup show of %s has a path without %s", resource, key)
	}
	a, err := parseConfAddress(s.words[1:])
	if err != nil {
		return address{}, fmt.Errorf("drbdsetup show of %s: path %s: %w", resource, key, err)
	}
	return a, nil
}
