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
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// Client is a connection to one guest's server.
type Client struct {
	rpc     *rpc.Client
	Address string
}

var _ exec.Cmder = (*Client)(nil)

// Dial connects to a guest, retrying until the deadline: the far guest may
// still be booting.
func Dial(address string, deadline time.Time) (*Client, error) {
	for {
		conn, err := net.DialTimeout("tcp", address, 5*time.Second)
		if err == nil {
			return &Client{rpc: rpc.NewClient(conn), Address: address}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("guest %s did not answer: %w", address, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Close closes the connection.
func (c *Client) Close() error { return c.rpc.Close() }

// Exit asks the guest's server to stop.
func (c *Client) Exit() error { return c.rpc.Call(ServiceName+".Exit", struct{}{}, &struct{}{}) }

// Command makes a command that runs on the guest.
func (c *Client) Command(ctx context.Context, name string, args ...string) exec.Cmd {
	return &remoteCmd{client: c, ctx: ctx, name: name, args: args}
}

type remoteCmd struct {
	client *Client
	ctx    context.Context
	name   string
	args   []string
	stdin  io.Reader
	stdout io.Writer
}

func (r *remoteCmd) SetStdin(in io.Reader) exec.Cmd { r.stdin = in; return r }
func (r *remoteCmd) SetStdout(w io.Writer) exec.Cmd { r.stdout = w; return r }

// Run sends the command with its whole stdin and writes its whole stdout
// when it ends: commands the rig runs remotely print little, or print a
// stream the test holds in memory anyway.
func (r *remoteCmd) Run() error {
	command := append([]string{r.name}, r.args...)
	args := RunArgs{Name: r.name, Args: r.args}
	if r.stdin != nil {
		in, err := io.ReadAll(r.stdin)
		if err != nil {
			return &exec.RunError{Command: command, ExitCode: -1, Err: fmt.Errorf("reading stdin: %w", err)}
		}
		args.Stdin = in
	}
	if deadline, ok := r.ctx.Deadline(); ok {
		args.TimeoutSeconds = max(1, int(time.Until(deadline).Seconds()))
	}
	var reply RunReply
	call := r.client.rpc.Go(ServiceName+".Run", args, &reply, nil)
	select {
	case <-r.ctx.Done():
		return &exec.RunError{Command: command, ExitCode: -1, Err: r.ctx.Err()}
	case <-call.Done:
	}
	if call.Error != nil {
		return &exec.RunError{Command: command, ExitCode: -1, Err: call.Error}
	}
	if r.stdout != nil && len(reply.Stdout) > 0 {
		if _, err := r.stdout.Write(reply.Stdout); err != nil {
			return &exec.RunError{Command: command, ExitCode: -1, Err: err}
		}
	}
	if reply.Failure != "" {
		return &exec.RunError{Command: command, ExitCode: reply.ExitCode, Stderr: reply.Stderr, Err: errors.New(reply.Failure)}
	}
	return nil
}

// OpenDevice opens a block device on the guest; it fits node/zfs's and
// node/drbd's Options.OpenDevice.
func (c *Client) OpenDevice(path string, writable bool) (backend.Device, error) {
	var handle uint64
	if err := c.rpc.Call(ServiceName+".Open", OpenArgs{Path: path, Writable: writable}, &handle); err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: errnoFrom(err)}
	}
	return &remoteDevice{client: c, handle: handle, path: path}, nil
}

// FenceDevice fences a block device on the guest, or lifts its fence; it
// fits node/zfs's and node/drbd's Options.FenceDevice. The errno of a
// failure crosses the wire; fence's sentinel errors arrive as their words.
func (c *Client) FenceDevice(path string, fenced bool) error {
	if err := c.rpc.Call(ServiceName+".Fence", FenceArgs{Path: path, Fenced: fenced}, &struct{}{}); err != nil {
		return &os.PathError{Op: "fence", Path: path, Err: errnoFrom(err)}
	}
	return nil
}

var errnoText = regexp.MustCompile(`^errno (\d+): `)

// errnoFrom recovers the errno the server put in front of an open's error.
func errnoFrom(err error) error {
	if m := errnoText.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			return syscall.Errno(n)
		}
	}
	return err
}

type remoteDevice struct {
	client *Client
	handle uint64
	path   string
}

func (d *remoteDevice) call(method, op string, args IOArgs) (IOReply, error) {
	var reply IOReply
	args.Handle = d.handle
	if err := d.client.rpc.Call(ServiceName+"."+method, args, &reply); err != nil {
		return reply, &os.PathError{Op: op, Path: d.path, Err: err}
	}
	switch {
	case reply.EOF:
		return reply, io.EOF
	case reply.Errno != 0:
		return reply, &os.PathError{Op: op, Path: d.path, Err: syscall.Errno(reply.Errno)}
	case reply.Error != "":
		return reply, &os.PathError{Op: op, Path: d.path, Err: errors.New(reply.Error)}
	}
	return reply, nil
}

func (d *remoteDevice) ReadAt(b []byte, offset int64) (int, error) {
	reply, err := d.call("ReadAt", "read", IOArgs{Offset: offset, Length: len(b)})
	n := copy(b, reply.Data)
	return n, err
}

func (d *remoteDevice) WriteAt(b []byte, offset int64) (int, error) {
	reply, err := d.call("WriteAt", "write", IOArgs{Offset: offset, Data: bytes.Clone(b)})
	return reply.N, err
}

func (d *remoteDevice) Sync() error {
	_, err := d.call("Sync", "sync", IOArgs{})
	return err
}

func (d *remoteDevice) Close() error {
	_, err := d.call("Close", "close", IOArgs{})
	return err
}
