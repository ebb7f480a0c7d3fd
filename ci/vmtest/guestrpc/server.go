package guestrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/fence"
)

// maxTimeout bounds a command whose caller set none.
const maxTimeout = 10 * time.Minute

// Guest is the service a guest offers. Its methods follow net/rpc's shape.
type Guest struct {
	cmder exec.Cmder
	exit  chan struct{}

	mu      sync.Mutex
	next    uint64
	devices map[uint64]*os.File
}

// Serve answers calls on listener until a client calls Exit or the listener
// fails.
func Serve(listener net.Listener) error {
	g := &Guest{cmder: exec.Local{}, exit: make(chan struct{}), devices: map[uint64]*os.File{}}
	server := rpc.NewServer()
	if err := server.RegisterName(ServiceName, g); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				done <- err
				return
			}
			go server.ServeConn(conn)
		}
	}()
	select {
	case <-g.exit:
		listener.Close()
		return nil
	case err := <-done:
		return err
	}
}

// Run runs a command and reports its output and how it ended.
func (g *Guest) Run(args RunArgs, reply *RunReply) error {
	timeout := maxTimeout
	if args.TimeoutSeconds > 0 {
		timeout = time.Duration(args.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := g.cmder.Command(ctx, args.Name, args.Args...)
	if args.Stdin != nil {
		cmd.SetStdin(bytes.NewReader(args.Stdin))
	}
	stdout, err := exec.Output(cmd)
	reply.Stdout = stdout
	var run *exec.RunError
	switch {
	case err == nil:
	case errors.As(err, &run):
		reply.Stderr, reply.ExitCode, reply.Failure = run.Stderr, run.ExitCode, run.Err.Error()
	default:
		reply.ExitCode, reply.Failure = -1, err.Error()
	}
	return nil
}

// Open opens a block device and returns its handle.
func (g *Guest) Open(args OpenArgs, handle *uint64) error {
	flag := os.O_RDONLY
	if args.Writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(args.Path, flag, 0)
	if err != nil {
		return errnoError(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next++
	g.devices[g.next] = f
	*handle = g.next
	return nil
}

func (g *Guest) device(handle uint64) (*os.File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.devices[handle]
	if !ok {
		return nil, fmt.Errorf("no open device %d", handle)
	}
	return f, nil
}

// ReadAt reads Length bytes at Offset.
func (g *Guest) ReadAt(args IOArgs, reply *IOReply) error {
	f, err := g.device(args.Handle)
	if err != nil {
		return err
	}
	buf := make([]byte, args.Length)
	n, err := f.ReadAt(buf, args.Offset)
	reply.Data, reply.N = buf[:n], n
	fill(reply, err)
	return nil
}

// WriteAt writes Data at Offset.
func (g *Guest) WriteAt(args IOArgs, reply *IOReply) error {
	f, err := g.device(args.Handle)
	if err != nil {
		return err
	}
	reply.N, err = f.WriteAt(args.Data, args.Offset)
	fill(reply, err)
	return nil
}

// Sync flushes a device.
func (g *Guest) Sync(args IOArgs, reply *IOReply) error {
	f, err := g.device(args.Handle)
	if err != nil {
		return err
	}
	fill(reply, f.Sync())
	return nil
}

// Close closes a device.
func (g *Guest) Close(args IOArgs, reply *IOReply) error {
	f, err := g.device(args.Handle)
	if err != nil {
		return err
	}
	g.mu.Lock()
	delete(g.devices, args.Handle)
	g.mu.Unlock()
	fill(reply, f.Close())
	return nil
}

// Fence fences a block device of the guest, or lifts its fence: the guest's
// init (PID 1) shares its mount namespace with everything the tests mount.
func (g *Guest) Fence(args FenceArgs, _ *struct{}) error {
	return errnoError(fence.Path(args.Path, args.Fenced, fence.Namespace{}))
}

// Exit stops the server once the reply is on its way.
func (g *Guest) Exit(_ struct{}, _ *struct{}) error {
	go func() {
		time.Sleep(100 * time.Millisecond) // let the reply leave first
		close(g.exit)
	}()
	return nil
}

func fill(reply *IOReply, err error) {
	switch {
	case err == nil:
	case err == io.EOF:
		reply.EOF = true
	default:
		reply.Error = err.Error()
		var errno syscall.Errno
		if errors.As(err, &errno) {
			reply.Errno = int(errno)
		}
	}
}

// errnoError keeps the errno in an error net/rpc carries as a string.
func errnoError(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Errorf("errno %d: %v", int(errno), err)
	}
	return err
}
