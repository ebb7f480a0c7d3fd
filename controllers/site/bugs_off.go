//go:build !baton_bugs

package site

import corev1 "k8s.io/api/core/v1"

// bubbleVolumeMode is the volumeMode a drill's bubble PV and PVC carry: the
// source's (rule 8; a VM's disk is Block). A build with the baton_bugs tag
// puts the first seed's bug here (bugs_on.go, internal/bugs).
func bubbleVolumeMode(source corev1.PersistentVolumeMode) *corev1.PersistentVolumeMode {
	return &source
}
