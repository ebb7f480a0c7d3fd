package csi

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// DriverName is the CSI driver's name, as StorageClasses name it.
const DriverName = "csi.baton-dr.io"

// Identity is the CSI Identity service.
type Identity struct {
	csi.UnimplementedIdentityServer
	Name    string // DriverName unless set
	Version string
	// Controller reports whether this process serves the Controller service.
	Controller bool
}

func (i *Identity) name() string {
	if i.Name == "" {
		return DriverName
	}
	return i.Name
}

func (i *Identity) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: i.name(), VendorVersion: versionOr(i.Version)}, nil
}

func (i *Identity) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	var out []*csi.PluginCapability
	if i.Controller {
		out = append(out, &csi.PluginCapability{Type: &csi.PluginCapability_Service_{
			Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}}})
	}
	out = append(out, &csi.PluginCapability{Type: &csi.PluginCapability_VolumeExpansion_{
		VolumeExpansion: &csi.PluginCapability_VolumeExpansion{Type: csi.PluginCapability_VolumeExpansion_ONLINE}}})
	return &csi.GetPluginCapabilitiesResponse{Capabilities: out}, nil
}

func (i *Identity) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

func versionOr(v string) string {
	if v == "" {
		return "devel"
	}
	return v
}
