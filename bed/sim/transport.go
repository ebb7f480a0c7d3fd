package sim

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/storage/core"
)

// shipTimeout is how long a sender waits for a receiver's acknowledgement
// beyond the stream's own transfer time before it gives up.
const shipTimeout = 30 * time.Second

// ErrShipTimeout: a stream or its acknowledgement was lost.
var ErrShipTimeout = errors.New("stream timed out")

// transport ships a node's streams across the simulated network: the stream
// travels as one message sized by its encoding, the receiver's agent takes it
// in on delivery, and a small acknowledgement travels back.
type transport struct{ from *Node }

func (t transport) Ship(receiver core.Receiver, header agent.StreamHeader, stream io.ReadCloser,
	done func(bytes uint64, err error)) {
	w := t.from.site.world
	size := uint64(1 << 20)
	if sized, ok := stream.(interface{ Len() uint64 }); ok {
		size = sized.Len()
	}
	finished := false
	finish := func(bytes uint64, err error) {
		if finished {
			return
		}
		finished = true
		stream.Close()
		done(bytes, err)
	}
	bandwidth := w.options.SiteLink.BandwidthBytesPerSecond
	transfer := time.Duration(float64(size) / float64(max(bandwidth, 1)) * float64(time.Second))
	w.Sim.After(transfer+shipTimeout, "ship timeout "+header.Dataset+"@"+header.Snapshot, func() {
		finish(0, fmt.Errorf("%s -> %s: %w", t.from.Endpoint, receiver.Address, ErrShipTimeout))
	})
	target := w.node(receiver.Address)
	w.Net.Send(t.from.Endpoint, receiver.Address, size, "stream "+header.Dataset+"@"+header.Snapshot, func() {
		if finished || target == nil || !target.Up {
			return
		}
		err := target.Agent.Receive(header, stream)
		w.Net.Send(receiver.Address, t.from.Endpoint, 64, "ack "+header.Dataset+"@"+header.Snapshot, func() {
			finish(size, err)
		})
	})
}

// node finds a node by its endpoint.
func (w *World) node(endpoint string) *Node {
	for _, s := range w.sites {
		for _, n := range s.Nodes {
			if n.Endpoint == endpoint {
				return n
			}
		}
	}
	return nil
}
