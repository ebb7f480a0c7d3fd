// Command baton-node is baton's node agent: it drives ZFS (or btrfs) and DRBD on one storage node.
package main

import (
	"context"
	"io"

	"github.com/baton-dr/baton/internal/command"
)

const usage = `Usage: baton-node --node NAME --secret-file FILE --backend btrfs|zfs [flags]

The node agent of one storage node. Every --interval it fetches the node's
spec from its site's storage API (HTTPS, the cluster secret as bearer token),
converges the node on it -- volumes on the local pool (ZFS, or btrfs where the
host lacks the ZFS module), DRBD, snapshots, the snapshot streams to ship to
the peer site -- and reports what the node holds. It serves the streams peer
sites ship to it (TLS 1.3, each stream authorised by its replica's token).

A pool that exists is adopted, never reformatted; a volume the node held
before and no longer finds is reported, never re-created empty. When the
storage API cannot be reached the node keeps what it has. SIGTERM finishes
the pass in progress, closes the stream server, and closes the pool
(unmounting it and detaching its loop devices) unless a volume is in use.

--secret-file holds the clusters document of the CSI secret ("clusters" key:
{"clusters":[{"cluster_id","cluster_endpoint","cluster_secret","local"}]});
the node serves its local cluster. Logs are JSON on stderr and never carry a
secret or a stream token.

Flags:
`

func main() { command.Main("baton-node", run) }

// run parses the flags and runs the node agent until ctx ends.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return serve(ctx, o, stderr)
}
