package site

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writeAttempts bounds the retries of a write that lost a race: a conflict
// (someone else, a status reconciler or a person, wrote the object between our
// read and our write) or a create that found the name taken.
const writeAttempts = 8

// ErrForeignRecord reports an object of the same name that holds another
// storage cluster's record: it is never overwritten.
var ErrForeignRecord = errors.New("object holds another cluster's record")

// record is one record's object for the guarded write: its key, a fresh empty
// object of its kind, and how the record is rendered onto an object.
type record struct {
	what   string // for errors: "volume <ref>"
	key    types.NamespacedName
	empty  func() client.Object
	render func(client.Object) error
	// owned reports whether a stored object holds this store's record.
	owned func(client.Object) bool
	// noCreate refuses to create a missing object: StorageNodes are the
	// deployment flow's to create.
	noCreate error
}

// write stores a record. The spec and the status of an object are separate
// writes (the status is a subresource), so one record is two writes; the
// record is never half-applied:
//
//   - An update of both halves is tried as a server-side dry run on both
//     first, so a change that the CRD's validation (CEL included) refuses is
//     refused before either half is written. An update of one half needs no
//     dry run: its one write is refused whole.
//   - A create writes the spec and then the status; when the status is
//     refused, the object just created is deleted again (by UID).
//
// Conflicts are retried from a fresh read, a bounded number of times. The only
// window left is a failure of the transport between the two real writes; the
// next write of the record repairs it, as the core re-writes its records.
func (s *Store) write(r record) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.callTimeout)
	defer cancel()
	var err error
	for attempt := 0; attempt < writeAttempts; attempt++ {
		err = s.writeOnce(ctx, r)
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("failed to store %s: %w", r.what, err)
	}
	return nil
}

func (s *Store) writeOnce(ctx context.Context, r record) error {
	stored := r.empty()
	err := s.reader.Get(ctx, r.key, stored)
	if apierrors.IsNotFound(err) && r.noCreate != nil {
		return r.noCreate
	}
	if apierrors.IsNotFound(err) {
		return s.create(ctx, r)
	}
	if err != nil {
		return err
	}
	if !r.owned(stored) {
		return fmt.Errorf("%w: %s is not of cluster %s", ErrForeignRecord, r.key.Name, s.cluster)
	}
	desired := stored.DeepCopyObject().(client.Object)
	if err := r.render(desired); err != nil {
		return err
	}
	specChanged, statusChanged, err := changed(stored, desired)
	if err != nil || (!specChanged && !statusChanged) {
		return err
	}
	if specChanged && statusChanged { // a change of one half is refused whole by its one write
		if err := s.client.Update(ctx, copyOf(desired), client.DryRunAll); err != nil {
			return err
		}
		if err := s.client.Status().Update(ctx, copyOf(desired), client.DryRunAll); err != nil {
			return err
		}
	}
	return s.apply(ctx, desired, specChanged, statusChanged)
}

// apply makes the two real writes after both dry runs passed.
func (s *Store) apply(ctx context.Context, desired client.Object, specChanged, statusChanged bool) error {
	wantStatus := copyOf(desired)
	if specChanged {
		// The answer carries the stored status, not ours: keep ours aside.
		if err := s.client.Update(ctx, desired); err != nil {
			return err
		}
		wantStatus.SetResourceVersion(desired.GetResourceVersion())
	}
	if statusChanged {
		return s.client.Status().Update(ctx, wantStatus)
	}
	return nil
}

// create writes a new record's object, then its status; a refused status
// deletes the object again, so the record is stored whole or not at all.
func (s *Store) create(ctx context.Context, r record) error {
	desired := r.empty()
	desired.SetName(r.key.Name)
	desired.SetNamespace(r.key.Namespace)
	desired.SetLabels(map[string]string{ClusterLabel: string(s.cluster)})
	if err := r.render(desired); err != nil {
		return err
	}
	wantStatus := copyOf(desired)
	if err := s.client.Create(ctx, desired); err != nil {
		return err
	}
	_, statusChanged, err := changed(desired, wantStatus)
	if err != nil || !statusChanged {
		return err
	}
	wantStatus.SetResourceVersion(desired.GetResourceVersion())
	wantStatus.SetUID(desired.GetUID())
	if err := s.client.Status().Update(ctx, wantStatus); err != nil {
		uid := desired.GetUID()
		undo := s.client.Delete(ctx, desired, client.Preconditions{UID: &uid})
		if undo != nil && !apierrors.IsNotFound(undo) {
			return errors.Join(err, fmt.Errorf("failed to delete the half-created %s again: %w", r.key.Name, undo))
		}
		return err
	}
	return nil
}

// changed compares two objects of one kind half by half: the spec with the
// labels, and the status.
func changed(a, b client.Object) (spec, status bool, err error) {
	ua, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	if err != nil {
		return false, false, err
	}
	ub, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return false, false, err
	}
	spec = !equality.Semantic.DeepEqual(ua["spec"], ub["spec"]) ||
		!equality.Semantic.DeepEqual(a.GetLabels(), b.GetLabels())
	status = !equality.Semantic.DeepEqual(ua["status"], ub["status"])
	return spec, status, nil
}

func copyOf(o client.Object) client.Object { return o.DeepCopyObject().(client.Object) }
