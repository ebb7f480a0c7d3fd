package drbd

import (
	"errors"
	"regexp"
	"strconv"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// DRBD reports a refused state change and a refused configuration request with
// a number (enum drbd_state_rv, enum drbd_ret_code), which drbdsetup prints
// before its text:
//
//	1000: State change failed: (-2) Need access to UpToDate data
//	r0: Failure: (102) Local address(port) already in use.
//
// The kinds come from the numbers, which DRBD keeps stable across releases;
// the text rides along as the refusal's words. sim/drbd refuses with the
// same numbers and texts.
var (
	stateChangeCode = regexp.MustCompile(`State change failed: \((-?\d+)\)`)
	failureCode     = regexp.MustCompile(`Failure: \((\d+)\)`)
)

// stateChangeKinds maps enum drbd_state_rv to kinds.
var stateChangeKinds = map[int]error{
	-1:  backend.ErrRefused, // SS_TWO_PRIMARIES: Multiple primaries not allowed by config
	-2:  backend.ErrRefused, // SS_NO_UP_TO_DATE_DISK: Need access to UpToDate data
	-7:  backend.ErrRefused, // SS_PRIMARY_NOP: Refusing to be Primary while peer is not outdated
	-10: backend.ErrRefused, // SS_NOT_SUPPORTED
	-12: backend.ErrBusy,    // SS_DEVICE_IN_USE: Device is held open by someone
	-13: backend.ErrRefused, // SS_NO_NET_CONFIG
	-15: backend.ErrRefused, // SS_LOWER_THAN_OUTDATED
	-25: backend.ErrRefused, // SS_NO_QUORUM (DRBD 9)
}

// failureKinds maps enum drbd_ret_code to kinds.
var failureKinds = map[int]error{
	102: backend.ErrExists,   // ERR_LOCAL_ADDR: Local address(port) already in use.
	104: backend.ErrNotFound, // ERR_OPEN_DISK: Can not open backing device.
	114: backend.ErrBusy,     // ERR_BDCLAIM_DISK: Lower device is already claimed.
	119: backend.ErrNotFound, // ERR_MD_INVALID: No valid meta-data signature found.
	124: backend.ErrRefused,  // ERR_DISK_CONFIGURED: Device is attached to a disk
	125: backend.ErrRefused,  // ERR_NET_CONFIGURED: Device has a net-config
	138: backend.ErrInvalid,  // ERR_NO_DISK: Device does not have a disk-config
	151: backend.ErrRefused,  // ERR_CONNECTED: Need to be StandAlone
	158: backend.ErrNotFound, // ERR_RES_NOT_KNOWN: Unknown resource
	161: backend.ErrExists,   // ERR_MINOR_OR_VOLUME_EXISTS: Minor or volume exists already
}

// toolMessages are the refusals the tools print without a number.
var toolMessages = []struct {
	kind    error
	tool    string
	message *regexp.Regexp
}{
	// `drbdsetup status` says "No such resource"; `show`, `primary` and the
	// other netlink commands relay the kernel's ENODEV.
	{backend.ErrNotFound, "drbdsetup", regexp.MustCompile(`No such resource|received netlink error reply: No such device`)},
	// dump-md and create-md find metadata an unclean shutdown left with an
	// activity log to replay (drbdadm up replays it): metadata that exists.
	{backend.ErrRefused, "drbdmeta", regexp.MustCompile(`Found meta data is "unclean"`)},
	{backend.ErrRefused, "drbdmeta", regexp.MustCompile(`Device '\d+' is configured!`)},
	// create-md over metadata: drbdmeta asks on stderr and, with no terminal
	// to answer, cancels (it prints "Operation cancelled." on stdout).
	{backend.ErrRefused, "drbdmeta", regexp.MustCompile(`not waiting for confirmation|Operation cancell?ed`)},
	{backend.ErrInvalid, "drbdadm", regexp.MustCompile(`not defined in your config|no resources defined|parse error`)},
}

// classify turns a failed drbdadm, drbdsetup or drbdmeta run into a refusal
// of the kind DRBD's code says. A failure none of the tables knows stays the
// *exec.RunError it was.
func classify(err error) error {
	var run *exec.RunError
	if !errors.As(err, &run) {
		return err
	}
	message := run.Sentence()
	if m := stateChangeCode.FindStringSubmatch(message); m != nil {
		if kind, ok := stateChangeKinds[atoi(m[1])]; ok {
			return &backend.ToolError{Kind: kind, Tool: "drbdsetup", Message: message}
		}
	}
	if m := failureCode.FindStringSubmatch(message); m != nil {
		if kind, ok := failureKinds[atoi(m[1])]; ok {
			return &backend.ToolError{Kind: kind, Tool: "drbdsetup", Message: message}
		}
	}
	for _, t := range toolMessages {
		if t.message.MatchString(message) {
			return &backend.ToolError{Kind: t.kind, Tool: t.tool, Message: message}
		}
	}
	return err
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0 // the regexps admit digits only; an overflow matches no code
	}
	return n
}
