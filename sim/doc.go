// Package sim is the deterministic kernel of baton's simulation: one seed, one
// goroutine, simulated time. Everything else in sim/ (the network, disks, ZFS,
// DRBD, nodes, the bed) schedules its work here and draws its randomness from
// here, so that a seed and a commit replay a run byte for byte.
//
// The contract, after TigerBeetle's VOPR:
//
//   - Time is the World's. It starts at a fixed epoch and moves only when the
//     World runs an event; nothing reads the wall clock.
//   - Events run one at a time on the caller's goroutine, earliest first; events
//     due at the same instant run in the order they were scheduled (a sequence
//     number breaks the tie), never in map or heap order.
//   - Randomness comes from named substreams of the seed (World.Rand), so a new
//     consumer of one stream never shifts the numbers another stream sees.
//   - Every run is bounded: RunFor and RunUntil by a simulated-time limit, and the
//     whole World by an event budget whose exhaustion (a livelock, usually)
//     panics with a *Failure that names the seed and the command replaying it.
//   - The event log is the run's fingerprint: every executed event and every
//     Logf line is one text line, "<seconds since epoch> <kind> <text>", fed to a
//     running SHA-256. Hash returns its hex digest; it equals the sha256sum of
//     the trace (WithTrace) byte for byte.
//
// The World is not safe for concurrent use, by design: the simulation has one
// goroutine. A component that models a synchronous call does not block; it
// schedules its continuation with After.
package sim
