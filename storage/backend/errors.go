package backend

import (
	"errors"
	"fmt"
)

// The kinds of refusal a backend reports. Callers test them with errors.Is;
// the wrapped *ToolError says what the tool itself printed.
var (
	// ErrNotFound: the volume, snapshot or resource does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: the name is taken.
	ErrExists = errors.New("already exists")
	// ErrPoolFull: the pool cannot hold the data or the reservation.
	ErrPoolFull = errors.New("pool is full")
	// ErrBusy: the object is in use (dependent clones, an open device, a primary role).
	ErrBusy = errors.New("busy")
	// ErrDiverged: an incremental stream cannot be received because the target
	// was written since the stream's base (a snapshot taken after the writes
	// does not hide them; one taken without writes does not diverge, as zfs
	// judges it).
	ErrDiverged = errors.New("target diverged from the stream's base")
	// ErrNoBase: an incremental stream's base snapshot is not on the target.
	ErrNoBase = errors.New("stream base not found")
	// ErrInvalid: the request is malformed (a shrink, a bad name, a bad stream).
	ErrInvalid = errors.New("invalid request")
	// ErrRefused: the replicator refuses a state change (a second primary, metadata
	// over live data, promotion without up-to-date data), or a pool refuses to
	// change a read-only (fenced) volume through its device or its size.
	ErrRefused = errors.New("refused")
)

// ToolError is a refusal with the words of the tool that refused.
type ToolError struct {
	Kind    error  // one of the sentinels above
	Tool    string // "zfs", "btrfs", "drbdsetup", or "sim" tools named after the real ones
	Message string // what the tool printed, e.g. "cannot open 'tank/v': dataset does not exist"
}

func (e *ToolError) Error() string { return fmt.Sprintf("%s: %s", e.Tool, e.Message) }

// Unwrap lets errors.Is match the kind.
func (e *ToolError) Unwrap() error { return e.Kind }

// Refusal builds a *ToolError; format follows fmt.Sprintf.
func Refusal(kind error, tool, format string, args ...any) error {
	return &ToolError{Kind: kind, Tool: tool, Message: fmt.Sprintf(format, args...)}
}
