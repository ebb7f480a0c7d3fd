package sim

import (
	"context"
	"fmt"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed/apps"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/workload"
)

// Claims (Options.Claims): the applications hold their volumes as a
// Kubernetes site's pods do, through PersistentVolumes and claims on the
// site's API server.
//
//   - CreateVolume is external-provisioner's: a database's volume is a Block
//     claim; a volume of files is a Filesystem claim of a StorageClass that
//     names XFS, and the PV it binds names it too.
//   - A move restores the application's claims on the site it goes to, as
//     Ramen does: the PV keeps the volume's handle and names no fsType, as
//     the first seed saw Ramen restore one ("one Ramen restored without
//     the field") and as the real bed's restoreClaim does.
//   - The kubelet stages a claim as its PV says -- a raw device, or a
//     filesystem of the PV's fsType -- and, as the real one, refuses a pod
//     whose volumeDevices name a Filesystem claim or whose volumeMounts a
//     Block one: the application's pod holds its database as a device and
//     its files as a mount.
//   - A filesystem lives in the device's data: its superblock is the
//     device's first block (filesystem.go), so it travels with snapshots,
//     streams and clones as a real one does, and the node plugin finds on a
//     clone what the source carried.

const (
	// filesFilesystem is what the applications' files sit on: XFS, as the
	// seeds' volumes did -- not the node plugin's default (ext4), which is
	// what rule 7 is about.
	filesFilesystem = "xfs"
	// csiDriver is the driver the PVs name.
	csiDriver = sitecontroller.DefaultCSIDriverName
	// The users of the sites' API servers besides the operator.
	provisionerManager = "external-provisioner"
	ramenManager       = "ramen"
	kubeletManager     = "kubelet"
)

var _ apps.Claims = platform{}

// volumeRequest is the capability and the size CreateVolume asks for: a raw
// device of the workload's size, or, with claims, a filesystem for files
// whose superblock takes the head of the device.
func (w *World) volumeRequest(v workload.VolumeSpec) (*csispec.VolumeCapability, uint64) {
	if !w.options.Claims || !v.Files {
		return blockCapability(), v.SizeBytes
	}
	return mountCapability(filesFilesystem), v.SizeBytes + filesystemBytes
}

func mountCapability(fsType string) *csispec.VolumeCapability {
	return &csispec.VolumeCapability{
		AccessType: &csispec.VolumeCapability_Mount{Mount: &csispec.VolumeCapability_MountVolume{FsType: fsType}},
		AccessMode: &csispec.VolumeCapability_AccessMode{Mode: csispec.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// claimMode is the volumeMode of a claim of v.
func claimMode(files bool) corev1.PersistentVolumeMode {
	if files {
		return corev1.PersistentVolumeFilesystem
	}
	return corev1.PersistentVolumeBlock
}

// provision writes what external-provisioner writes once CreateVolume
// answered: the PV of the new volume, bound to the application's claim.
func (w *World) provision(site, app string, v workload.VolumeSpec, handle string) error {
	if !w.options.Claims {
		return nil
	}
	fsType := ""
	if v.Files {
		fsType = filesFilesystem
	}
	_, size := w.volumeRequest(v)
	return w.Site(site).bindClaim(provisionerManager, "pvc-"+app+"-"+v.Name, app,
		apps.Volume{Name: v.Name, Handle: handle, SizeBytes: size, Files: v.Files}, fsType)
}

// bindClaim creates a PV of the volume's handle and the claim bound to it,
// in namespace; a claim of that name that exists stays as it is.
func (s *Site) bindClaim(manager, pvName, namespace string, v apps.Volume, fsType string) error {
	ctx := context.Background()
	c := s.api.client(manager)
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: v.Name}, &corev1.PersistentVolumeClaim{})
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	mode := claimMode(v.Files)
	capacity := corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(int64(v.SizeBytes), resource.BinarySI)}
	access := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{Capacity: capacity, AccessModes: access, VolumeMode: &mode,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: namespace, Name: v.Name},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: csiDriver, VolumeHandle: v.Handle, FSType: fsType}}}}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: v.Name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: access, VolumeMode: &mode, VolumeName: pvName,
			Resources: corev1.VolumeResourceRequirements{Requests: capacity}}}
	for _, o := range []client.Object{pv, pvc} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %s %s: %w", s.Name, o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	return nil
}

// Retain keeps the application's volumes when their claims go, as Ramen
// sets its PVs' reclaim policy before it protects them: the data is the
// chain's from then on.
func (p platform) Retain(a *apps.App, site string) error {
	if !p.w.options.Claims {
		return nil
	}
	ctx := context.Background()
	c := p.w.Site(site).api.client(ramenManager)
	for _, v := range a.Volumes {
		var pvc corev1.PersistentVolumeClaim
		if err := c.Get(ctx, client.ObjectKey{Namespace: a.Spec.Name, Name: v.Name}, &pvc); err != nil {
			return err
		}
		var pv corev1.PersistentVolume
		if err := c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
			return err
		}
		if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain {
			continue
		}
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		if err := c.Update(ctx, &pv); err != nil {
			return err
		}
	}
	return nil
}

// Restore makes the application's claims on site, as Ramen restores them
// before a move: each PV of the volume's handle (the chain's root, kept for
// ever), naming no fsType, bound to the claim; a claim that is there stays.
func (p platform) Restore(a *apps.App, site string) error {
	if !p.w.options.Claims {
		return nil
	}
	for _, v := range a.Volumes {
		if err := p.w.Site(site).bindClaim(ramenManager, a.Spec.Name+"-"+site+"-"+v.Name, a.Spec.Name, v, ""); err != nil {
			return err
		}
	}
	return nil
}

// capability is how the kubelet stages v for a pod whose claims are in
// namespace: a raw device without claims; with them, as the claim's PV
// says. A pod that holds a claim in the other mode than it uses the volume
// does not start (the kubelet's own check), and neither does one whose
// claim is bound to another volume than v's.
func (w *World) capability(s *Site, namespace string, v apps.Volume) (*csispec.VolumeCapability, error) {
	if !w.options.Claims {
		return blockCapability(), nil
	}
	ctx := context.Background()
	c := s.api.client(kubeletManager)
	var pvc corev1.PersistentVolumeClaim
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: v.Name}, &pvc); err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", namespace, v.Name, err)
	}
	var pv corev1.PersistentVolume
	if err := c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
		return nil, fmt.Errorf("claim %s/%s's volume %q: %w", namespace, v.Name, pvc.Spec.VolumeName, err)
	}
	switch {
	case pv.Spec.CSI == nil || pv.Spec.CSI.Driver != csiDriver || pv.Spec.CSI.VolumeHandle != v.Handle:
		return nil, fmt.Errorf("claim %s/%s is bound to %s, not to a volume of %s with handle %s", namespace, v.Name, pv.Name, csiDriver, v.Handle)
	case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Namespace != namespace || pv.Spec.ClaimRef.Name != v.Name:
		return nil, fmt.Errorf("volume %s is not bound to claim %s/%s", pv.Name, namespace, v.Name)
	}
	mode := volumeModeOf(pv.Spec.VolumeMode)
	if pvcMode := volumeModeOf(pvc.Spec.VolumeMode); pvcMode != mode {
		return nil, fmt.Errorf("claim %s/%s is %s and its volume %s is %s: they do not bind", namespace, v.Name, pvcMode, pv.Name, mode)
	}
	if want := claimMode(v.Files); mode != want {
		use := "volumeDevices"
		if v.Files {
			use = "volumeMounts"
		}
		return nil, fmt.Errorf("the kubelet refuses the pod: volume %s has volumeMode %s, but is specified in %s", v.Name, mode, use)
	}
	if mode == corev1.PersistentVolumeBlock {
		return blockCapability(), nil
	}
	return mountCapability(pv.Spec.CSI.FSType), nil
}

// defaultVolumeMode sets a PV's or a claim's volumeMode to Filesystem
// unless it names one, as the API server does on create.
func defaultVolumeMode(obj client.Object) {
	filesystem := corev1.PersistentVolumeFilesystem
	switch o := obj.(type) {
	case *corev1.PersistentVolume:
		if o.Spec.VolumeMode == nil {
			o.Spec.VolumeMode = &filesystem
		}
	case *corev1.PersistentVolumeClaim:
		if o.Spec.VolumeMode == nil {
			o.Spec.VolumeMode = &filesystem
		}
	}
}

// volumeModeOf is a volumeMode as the API server defaults it.
func volumeModeOf(mode *corev1.PersistentVolumeMode) corev1.PersistentVolumeMode {
	if mode == nil {
		return corev1.PersistentVolumeFilesystem
	}
	return *mode
}
