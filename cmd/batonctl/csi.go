package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/identity"
	"github.com/csi-addons/spec/lib/go/replication"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// rpcServices are the services batonctl csi can call, by full name.
var rpcServices = []protoreflect.FileDescriptor{
	csiapi.File_csi_proto,
	identity.File_identity_identity_proto,
	replication.File_replication_replication_proto,
}

// rpc is one callable method.
type rpc struct {
	service, method string
	input, output   protoreflect.MessageType
}

func (r rpc) fullMethod() string { return "/" + r.service + "/" + r.method }
func (r rpc) name() string       { return r.service + "." + r.method }

func newCSICommand() *cobra.Command {
	var socket, request string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "csi <rpc|list> --socket unix:///path [--json request]",
		Short: "call any CSI or csi-addons RPC of a driver by hand",
		Long: `Calls one RPC of a CSI driver on its unix socket and prints the answer as JSON.
<rpc> is a method name (CreateVolume, PromoteVolume, NodeGetInfo, ...), qualified
with its service when two services share it (csi.v1.Identity.Probe,
identity.Identity.Probe). The request is protobuf JSON, e.g.
  batonctl csi PromoteVolume --socket unix:///run/csi-addons/socket \
    --json '{"replicationSource":{"volume":{"volumeId":"<cluster>:<volume>"}},"force":true}'
"batonctl csi list" lists every RPC.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "list" {
				for _, r := range rpcs() {
					fmt.Fprintln(cmd.OutOrStdout(), r.name())
				}
				return nil
			}
			if socket == "" {
				return errors.New("--socket is required")
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return callRPC(ctx, cmd.OutOrStdout(), socket, args[0], request)
		},
	}
	cmd.Flags().StringVar(&socket, "socket", "", "the driver's unix socket (unix:///path or /path)")
	cmd.Flags().StringVar(&request, "json", "{}", "the request, protobuf JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "deadline of the call")
	return cmd
}

// rpcs lists every method of the known services, sorted by name.
func rpcs() []rpc {
	var out []rpc
	for _, file := range rpcServices {
		for i := 0; i < file.Services().Len(); i++ {
			service := file.Services().Get(i)
			for j := 0; j < service.Methods().Len(); j++ {
				m := service.Methods().Get(j)
				if m.IsStreamingClient() || m.IsStreamingServer() {
					continue
				}
				input, err := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
				if err != nil {
					continue
				}
				output, err := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
				if err != nil {
					continue
				}
				out = append(out, rpc{service: string(service.FullName()), method: string(m.Name()), input: input, output: output})
			}
		}
	}
	slices.SortFunc(out, func(a, b rpc) int { return strings.Compare(a.name(), b.name()) })
	return out
}

// findRPC finds a method by its name, or by service and name.
func findRPC(name string) (rpc, error) {
	var matches []rpc
	for _, r := range rpcs() {
		if r.method == name || r.name() == name || r.fullMethod() == name {
			matches = append(matches, r)
		}
	}
	switch len(matches) {
	case 0:
		return rpc{}, fmt.Errorf("no RPC %q (batonctl csi list)", name)
	case 1:
		return matches[0], nil
	}
	var names []string
	for _, m := range matches {
		names = append(names, m.name())
	}
	return rpc{}, fmt.Errorf("%q is ambiguous: %s", name, strings.Join(names, ", "))
}

func callRPC(ctx context.Context, out io.Writer, socket, name, request string) error {
	r, err := findRPC(name)
	if err != nil {
		return err
	}
	in := r.input.New().Interface()
	if err := (protojson.UnmarshalOptions{}).Unmarshal([]byte(request), in); err != nil {
		return fmt.Errorf("--json is not a %s: %w", r.input.Descriptor().FullName(), err)
	}
	target := socket
	if !strings.HasPrefix(target, "unix:") {
		target = "unix://" + target
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	answer := r.output.New().Interface()
	if err := conn.Invoke(ctx, r.fullMethod(), in, answer); err != nil {
		return fmt.Errorf("%s: %w", r.name(), err)
	}
	data, err := protojson.MarshalOptions{Multiline: true, EmitUnpopulated: true}.Marshal(answer)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, string(data))
	return err
}
