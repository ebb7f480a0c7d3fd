// Package guestrpc lets a test in one vmtest guest drive another: run its
// commands and read and write its block devices, over net/rpc on the guests'
// control network. Client implements exec.Cmder, so node/zfs and node/drbd
// run on the far guest unchanged, and OpenDevice is their Options.OpenDevice.
//
// The rig's own plumbing, not baton's: one trusted test network between two
// throw-away guests, no authentication, whole stdin and stdout in memory.
package guestrpc
