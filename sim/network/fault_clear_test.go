package network_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/sim"
	"github.com/baton-dr/baton/sim/network"
)

func TestClearSlowdownsKeepsPartitions(t *testing.T) {
	w := sim.NewWorld(1)
	n := network.New(w, network.LinkOptions{Latency: time.Millisecond})
	n.SlowLink("a", "b", network.Slowdown{ExtraLatency: time.Second})
	n.Partition("a", "b")
	n.ClearSlowdowns("a", "b")
	if n.Reachable("a", "b") {
		t.Fatal("clearing slowdowns healed a partition")
	}
	n.Heal("a", "b")
	rtt, err := n.Call("b", "a")
	if err != nil || rtt >= time.Second {
		t.Fatalf("after clearing, a call takes %s (%v): the slowdown stayed", rtt, err)
	}
}
