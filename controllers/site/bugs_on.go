//go:build baton_bugs

package site

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/baton-dr/baton/internal/bugs"
)

// bubbleVolumeMode with bubble-no-volumemode omits the mode: the API server
// defaults it to Filesystem, and the kubelet mounts a raw disk.
func bubbleVolumeMode(source corev1.PersistentVolumeMode) *corev1.PersistentVolumeMode {
	if bugs.On(bugs.BubbleNoVolumeMode) {
		return nil
	}
	return &source
}
