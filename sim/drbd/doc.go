// Package drbd simulates DRBD inside one site: the replication fabric of a
// volume's backing volumes across the site's storage nodes, protocol C, driven
// through one backend.Replicator per node.
//
// The simulation refuses what DRBD refuses, with DRBD's own words, and is
// deterministic: one goroutine, simulated time through a Scheduler, no maps in
// any output order. It models this configuration, which the production
// Replicator must write for the conformance suite (replicatortest) to hold:
//
//	net     { protocol C; }                       no allow-two-primaries
//	disk    { fencing resource-only; }            Options.Fencing (the default);
//	                                              no fence-peer handler
//	options { quorum majority; on-no-quorum io-error; }   when Options.Quorum
//	after-sb-0pri/1pri/2pri disconnect            split brain is never resolved
//
// Where DRBD 8.4 and 9 differ, the simulation refuses what either refuses
// (a Secondary's device cannot be opened, as on 8.4; new-current-uuid needs
// every peer Connected or StandAlone, as on 8.4), and models 9's multi-node
// behaviour where 8.4 has none (weak nodes, reconciliation, quorum).
//
// # Model
//
//   - Metadata lives on the backing volume: CreateMetadata writes a superblock
//     into the volume's last 4 KiB (DRBD's internal metadata sits at the end of
//     the device too, so the DRBD device is that much smaller than its volume).
//     The superblock carries the data generation (current UUID, history, disk
//     state) and travels with the volume's bytes: a recreated volume has no
//     metadata; a clone of a snapshot carries its source's. Per-peer bitmaps and
//     bitmap UUIDs are kept by the Cluster beside the superblock (keyed by node
//     and volume, checked against the superblock's serial); they survive Down,
//     Up and crashes, as the on-disk bitmap does.
//   - Data generations decide what a connection does, as drbd_uuid_compare
//     does: equal current UUIDs are in sync; a peer whose current UUID is my
//     bitmap UUID for it has missed exactly the blocks of my bitmap (resync of
//     those blocks); one found only in my history needs a full sync; both sides
//     changed since a common ancestor is split brain (both StandAlone, writes
//     kept on both sides, nothing resolved); no common ancestor is unrelated
//     data (StandAlone). A Primary never becomes SyncTarget (StandAlone).
//   - A new current UUID is generated on a Primary the moment it loses a peer
//     whose disk was UpToDate or Inconsistent (DRBD 8.4; with Options.Quorum,
//     which models DRBD 9, on the first write that peer misses instead), on the
//     first write that a configured diskful node misses, on a forced promotion
//     and on NewCurrentUUID; the old one becomes the bitmap UUID of the missing
//     nodes and from then on their bitmaps collect the written blocks. A
//     crashed node does nothing, so a Primary that loses power keeps its
//     generation, and one that was only cut off does not.
//   - Roles: at most one Primary in a connected component (DRBD 9 commits a
//     role change across the mesh); a Primary needs UpToDate data, its own or a
//     Connected peer's (diskless, SyncTarget), unless forced. With fencing
//     resource-only a Secondary that leaves a Primary gracefully is Outdated,
//     and a node may be promoted only while every diskful peer is Connected or
//     known Outdated (or, with quorum, while it has quorum); force overrides
//     ("Forced into split brain situation!"). A promotion without every peer
//     starts a new generation at once, as 8.4 does, so two nodes promoted
//     apart are a split brain even if they never write.
//   - A Secondary that cannot see the Primary while one of its peers can is
//     weak and outdates itself; once no Primary feeds a connection whose two
//     sides hold different generations, they re-handshake (DRBD 9's
//     reconciliation resync).
//   - Writes (protocol C): WriteAt returns after the bytes reached the local
//     backing device and every Connected peer's; no simulated time passes.
//     Reads come from the local backing device, or, for a block it does not
//     have yet (a diskless or SyncTarget Primary), from a Connected UpToDate
//     peer. Sync on the DRBD device syncs every backing device that holds the
//     data (DRBD forwards flushes to its peers).
//
// # Time and connection loss
//
// Connection state is re-derived from Links whenever the Cluster is observed:
// at every Replicator call, every device I/O, and Cluster.Observe, which the
// world calls after it changes the network so that the log shows a loss at the
// moment it happened. A partition that heals between two observations is never
// seen, as DRBD does not see a blip shorter than its ping timeout. Resync moves
// ResyncChunkBytes per scheduled event at ResyncBytesPerSecond.
//
// # Fault model
//
//   - Partitions (Links): the sides go Connecting; a Primary's view of a lost
//     peer is Outdated; the writes of the current epoch that the peer has not
//     flushed are marked out of sync (DRBD's transfer log), so a peer that loses
//     unsynced writes in a later crash still gets them back.
//   - Crash(node): every resource on the node goes down without flushing; the
//     blocks the node wrote since its last flush are marked out of sync toward
//     every peer, and so is every 4 MiB extent still in a Primary's activity
//     log, flushed or not (DRBD applies the log after an unclean shutdown; a
//     clean Down empties it); its peers see the connection drop at their next
//     observation. Restart(node) brings the
//     node back with nothing up; metadata and synced data are where they were.
//     What a crash does to unsynced bytes on the backing volume is the pool's
//     business.
//   - A backing device that refuses a write (a full pool, a read-only zvol),
//     the writer's own or a peer's, is detached as DRBD's default
//     on-io-error detach does: the replica is Diskless, stays Connected,
//     and stays Diskless across reconnects; the write succeeds if any disk
//     took it (a Primary whose pool is full writes on through its peers) and
//     fails as an I/O error otherwise, as it does when only SyncTargets took
//     it; a node that reaches no UpToDate data fails all I/O
//     (on-no-data-accessible io-error). The holders' bitmaps collect what the
//     detached replica misses under one new generation. Up with the same
//     configuration (the node agent's next pass) attaches the disk again
//     -- unless it still refuses writes: drbdmeta's activity-log write fails
//     the attach -- and the handshake of the attaching disk resyncs it, a
//     Primary included (its disk negotiates, below Consistent). make
//     vmtest's TestFullPool* stories saw real DRBD 8.4 do each step.
//   - FenceDevice (the node agent's fence before a demotion) makes a
//     Primary's device read-only: its writes are refused before they reach
//     any disk, on handles opened before the fence too; reads and flushes
//     go on. The flag stays with the device across role changes, as
//     BLKROSET on /dev/drbdN does, until lifted or the resource goes down.
//   - Not modelled: network latency and bandwidth of replicated writes (resync
//     bandwidth only), discard-my-data recovery, online verify, resize, adjusting a live
//     resource.
package drbd
