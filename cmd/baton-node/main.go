// Command baton-node is baton's node agent: it drives ZFS (or btrfs) and DRBD on one storage node.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `Usage: baton-node [flags]

The node agent of one storage node. It reconciles the node's share of volumes
on the local pool (ZFS, or btrfs where the host lacks the ZFS module) and DRBD,
ships snapshot streams to the peer site, reports the node's status, and adopts
what already exists after a restart instead of re-creating it.

Flags:
`

func main() {
	flags := flag.NewFlagSet("baton-node", flag.ContinueOnError)
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), usage)
		flags.PrintDefaults()
	}
	if err := flags.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, "baton-node: the node agent has not landed yet (issue 7)")
	os.Exit(1)
}
