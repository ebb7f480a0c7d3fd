// The throwaway module ci/realbed/baton-image.sh builds the csi-addons
// controller manager (cmd/manager) and sidecar (sidecar/) in, pinned by
// csi-addons.go.sum. `make crds` reads the version here too: the chart carries
// the same release's CRDs and controller-manager role.
module baton.local/realbed/csiaddons

go 1.26

require github.com/csi-addons/kubernetes-csi-addons v0.12.0
