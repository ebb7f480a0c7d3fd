// Package daemon is the node agent's process without its main: the loop that
// fetches the node's spec from its site's storage API, hands it to the agent
// (node/agent), and reports what the node holds; the stream server that takes
// other sites' snapshot streams into the agent (node/stream); the links the
// CSI node plugin finds volumes' block devices through; the metrics; and the
// order in which all of it stops.
//
// # The loop
//
// Every interval (measured from the end of one pass to the start of the
// next, so a slow pass never queues another behind it): Spec, Reconcile,
// Report. A Spec that fails -- the operator unreachable, restarting, or
// partitioned away -- skips the pass: the node keeps what it has, its stream
// server keeps answering against the last spec it reconciled, and nothing is
// created or destroyed on a guess. A Report that fails is made good by the
// next pass, which reports the whole state again; the streams that finished
// in between (the agent hands each one over once) are kept by the daemon and
// carried by the next report that gets through, so the site learns of every
// shipment. Until it does, the spec still asks for the send and the agent
// ships it again; the receiver answers ok without reading a snapshot it
// holds.
//
// # Adoption
//
// A daemon over a pool a previous run left behind adopts it (the pool's New
// does: node/btrfs mounts the image it finds and never formats a filesystem
// it finds a signature on). The first spec says which datasets the node held
// before (VolumeSpec.MustExist), and the agent refuses to provision one of
// them empty: a restart never re-creates what it lost.
//
// # Device links
//
// In btrfs mode a volume's block device is a loop device that exists only
// while the pool has the volume open. With a device directory set, the
// daemon holds every Up volume of its spec open and keeps DeviceDir/<dataset>
// a symbolic link to its loop device: the CSI node plugin's
// --devices links. A volume leaves the spec, turns into a tombstone or is to
// be destroyed: its device is closed first (a destroy refuses an open
// volume), then its link goes.
//
// # Shutdown
//
// When Run's context ends the pass in progress finishes (its API calls are
// not cut), then: the stream server closes (streams being received are cut;
// the pool keeps nothing of a cut stream), the stream client closes (streams
// being sent are cut and reported failed to nobody; the site ships them
// again), the device links go and the devices close, and the pool closes
// (unmount, loop devices detached). A device that is still in use -- a
// filesystem on it is mounted -- is never pulled away: the daemon leaves it
// and the pool as they are, says so, and the next start adopts both.
package daemon
