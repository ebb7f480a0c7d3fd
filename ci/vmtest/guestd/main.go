// Command guestd is the vmtest guests' command server: the test binary in
// one guest drives another through it (package guestrpc). It serves on the
// address given until a client calls Exit.
//
//	guestd 10.98.0.2:7070        serve
//	guestd -exit 10.98.0.2:7070  ask the server there to stop
package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/baton-dr/baton/ci/vmtest/guestrpc"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-exit" {
		client, err := guestrpc.Dial(os.Args[2], time.Now().Add(10*time.Second))
		if err == nil {
			err = client.Exit()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "guestd:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: guestd [-exit] ADDRESS:PORT")
		os.Exit(2)
	}
	listener, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "guestd:", err)
		os.Exit(1)
	}
	fmt.Println("guestd: serving on", listener.Addr())
	if err := guestrpc.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, "guestd:", err)
		os.Exit(1)
	}
	fmt.Println("guestd: asked to exit")
}
