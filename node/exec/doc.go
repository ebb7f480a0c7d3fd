// Package exec runs the node agent's tools (btrfs, losetup, zfs, drbdsetup):
// one Cmder interface that every backend takes, one real implementation over
// os/exec, and one error, *RunError, that carries the command and what the
// tool printed on stderr, with secrets stripped.
//
// Backends never call os/exec themselves: taking a Cmder lets their tests
// drive the tool wrappers with exectest.FakeCmder, a test double fed with the
// output the real tools printed, and lets a bed run the same code inside a
// container or a VM through another Cmder.
package exec
