package drbd

// hasQuorum: with `quorum majority`, a node counts itself and the peers it is
// Connected to and needs more than half of the resource's nodes. Diskless
// tie-breakers vote like any node. Without quorum every node has it.
func (c *Cluster) hasQuorum(r *replica) bool {
	if !c.opts.Quorum {
		return true
	}
	votes := 1
	for _, peer := range r.peers() {
		if c.connected(r, peer) {
			votes++
		}
	}
	return 2*votes > len(r.config.Nodes)
}

// updateQuorum records and logs quorum changes of the resource's up
// replicas, ups.
func (c *Cluster) updateQuorum(resource string, ups []*replica) {
	for _, r := range ups {
		q := c.hasQuorum(r)
		if q != r.quorum {
			c.logf("%s %s: quorum( %s -> %s )", resource, r.node, yesNo(r.quorum), yesNo(q))
			r.quorum = q
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
