package guestrpc

// ServiceName is the name the server registers under.
const ServiceName = "Guest"

// RunArgs is one command to run on the guest.
type RunArgs struct {
	Name           string
	Args           []string
	Stdin          []byte
	TimeoutSeconds int // the caller's deadline; the guest kills the command after it
}

// RunReply is how the command ended. ExitCode is -1 when it did not exit on
// its own (it could not start, or was killed).
type RunReply struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	Failure  string // why the command failed, empty on success
}

// OpenArgs opens a block device.
type OpenArgs struct {
	Path     string
	Writable bool
}

// IOArgs is a read (Length bytes) or a write (Data) at Offset of an open device.
type IOArgs struct {
	Handle uint64
	Offset int64
	Length int
	Data   []byte
}

// IOReply carries the bytes read or written and the error, as an errno so
// that the caller's errors.Is(err, syscall.EPERM) holds across the wire.
type IOReply struct {
	Data  []byte
	N     int
	EOF   bool
	Errno int    // 0 when Error is not an errno
	Error string // empty on success
}

// FenceArgs sets the fence on a block device of the guest (Fenced) or lifts
// it, with package fence in the guest's mount namespace.
type FenceArgs struct {
	Path   string
	Fenced bool
}
