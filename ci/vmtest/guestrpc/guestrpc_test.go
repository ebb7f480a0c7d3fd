package guestrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dr/baton/node/exec"
)

func serve(t *testing.T) *Client {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(listener) }()
	client, err := Dial(listener.Addr().String(), time.Now().Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.Exit(); err != nil {
			t.Errorf("Exit: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		client.Close()
	})
	return client
}

func TestRemoteCommandsReportLikeLocalOnes(t *testing.T) {
	client := serve(t)
	out, err := exec.Output(client.Command(context.Background(), "sh", "-c", "cat; echo out"))
	if err != nil || string(out) != "out\n" {
		t.Fatalf("a command without stdin: %q, %v", out, err)
	}
	out, err = exec.Output(client.Command(context.Background(), "cat").SetStdin(strings.NewReader("fed")))
	if err != nil || string(out) != "fed" {
		t.Fatalf("cat of stdin: %q, %v", out, err)
	}
	err = client.Command(context.Background(), "sh", "-c", "echo said >&2; exit 3").Run()
	var run *exec.RunError
	if !errors.As(err, &run) || run.ExitCode != 3 || run.Words() != "said" || run.Command[0] != "sh" {
		t.Fatalf("a failing command: %#v", err)
	}
	err = client.Command(context.Background(), "/no/such/program").Run()
	if !errors.As(err, &run) || run.ExitCode != -1 {
		t.Fatalf("a missing program: %#v", err)
	}
}

func TestRemoteDevicesCarryErrnos(t *testing.T) {
	client := serve(t)
	path := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(path, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	dev, err := client.OpenDevice(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := dev.WriteAt([]byte("hello"), 4094); n != 5 || err != nil {
		t.Fatalf("WriteAt: %d, %v", n, err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if n, err := dev.ReadAt(buf, 4090); n != 10 || err != nil || !bytes.Equal(buf[4:9], []byte("hello")) {
		t.Fatalf("ReadAt: %d, %v, %q", n, err, buf)
	}
	if n, err := dev.ReadAt(buf, 8190); n != 2 || err != io.EOF {
		t.Fatalf("ReadAt across the end: %d, %v; want 2 and io.EOF", n, err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	readOnly, err := client.OpenDevice(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer readOnly.Close()
	if _, err := readOnly.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("a write through a read-only handle: %v, want EBADF", err)
	}
	if _, err := client.OpenDevice(path+".missing", true); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("opening a missing device: %v, want ENOENT", err)
	}
}
