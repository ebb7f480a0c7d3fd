package csi

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// Expected outcomes of the driver itself, beside the storage/core, storage/
// chain and storageapi sentinels.
var (
	// ErrNoVolume: no cluster records the handle (rule 2's NotFound).
	ErrNoVolume = errors.New("no such volume")
	// ErrBusy: another operation on the volume is running.
	ErrBusy = errors.New("an operation on the volume is already running")
	// ErrNotHere: the chain's end lives on a cluster this site does not manage.
	ErrNotHere = errors.New("the volume's data lives on another site")
	// ErrDeviceNotReady: the node agent has not brought the device up yet.
	ErrDeviceNotReady = errors.New("device not ready")
	// ErrFilesystemMismatch: the device carries another filesystem than the
	// one asked for, or none where one was recorded (rule 7).
	ErrFilesystemMismatch = errors.New("filesystem mismatch")
	// ErrNotStaged: NodePublishVolume before NodeStageVolume.
	ErrNotStaged = errors.New("volume is not staged")
	// ErrNotMounted: nothing of the volume is at the path given.
	ErrNotMounted = errors.New("volume is not at the path")
)

// codeTable maps every expected outcome to its gRPC code: the one place where
// a sentinel becomes a code. The first match wins.
var codeTable = []struct {
	err  error
	code codes.Code
}{
	{ErrBusy, codes.Aborted},
	{ErrNoVolume, codes.NotFound},
	{core.ErrNotFound, codes.NotFound},
	{ErrUnknownCluster, codes.NotFound},
	{ErrNotMounted, codes.NotFound},
	{core.ErrExists, codes.AlreadyExists},
	{chain.ErrMalformedRef, codes.InvalidArgument},
	{core.ErrMalformedSnapshotRef, codes.InvalidArgument},
	{core.ErrInvalid, codes.InvalidArgument},
	{storageapi.ErrNoClusters, codes.InvalidArgument},
	{storageapi.ErrClusters, codes.InvalidArgument},
	// Ramen retries Promote with force on FailedPrecondition.
	{core.ErrPeerUnreachable, codes.FailedPrecondition},
	{core.ErrPeerPrimary, codes.FailedPrecondition},
	{core.ErrNoReplica, codes.FailedPrecondition},
	{core.ErrNoSnapshot, codes.FailedPrecondition},
	{core.ErrSuperseded, codes.FailedPrecondition},
	{core.ErrReplicated, codes.FailedPrecondition},
	{core.ErrConflict, codes.FailedPrecondition},
	{core.ErrNotActive, codes.FailedPrecondition},
	{core.ErrNotPlaced, codes.FailedPrecondition},
	{chain.ErrNoLocalMember, codes.FailedPrecondition},
	{ErrNotHere, codes.FailedPrecondition},
	{ErrFilesystemMismatch, codes.FailedPrecondition},
	{ErrNotStaged, codes.FailedPrecondition},
	{core.ErrNoCapacity, codes.ResourceExhausted},
	{chain.ErrUnreachable, codes.Unavailable},
	// Not FailedPrecondition: the csi-addons controller answers that with a
	// forced promotion, which would clone an older snapshot than the final
	// one still in flight and lose acknowledged writes of a planned
	// relocation. Unavailable makes it retry without force.
	{core.ErrFinalSyncPending, codes.Unavailable},
	{ErrDeviceNotReady, codes.Unavailable},
	// Retried until the operator adopted the volume; never created anew.
	{core.ErrAdopting, codes.Unavailable},
	{storageapi.ErrUnauthorized, codes.Unauthenticated},
	{storageapi.ErrForbidden, codes.PermissionDenied},
	// Corrupt chain records: no retry mends them.
	{chain.ErrCycle, codes.Internal},
	{chain.ErrTooLong, codes.Internal},
	{chain.ErrForked, codes.Internal},
	{chain.ErrForeignRecord, codes.Internal},
	{chain.ErrInvalidMember, codes.Internal},
	{core.ErrNotLocal, codes.Internal}, // the driver addressed the wrong cluster: a bug
	{storageapi.ErrInternal, codes.Internal},
	{context.DeadlineExceeded, codes.DeadlineExceeded},
	{context.Canceled, codes.Canceled},
}

// toStatus renders err as a gRPC status; a status passes through unchanged.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	for _, c := range codeTable {
		if errors.Is(err, c.err) {
			return status.Error(c.code, err.Error())
		}
	}
	return status.Error(codes.Internal, err.Error())
}

// invalid is an InvalidArgument status for a request that misses or garbles
// a field.
func invalid(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, fmt.Sprintf(format, args...))
}
