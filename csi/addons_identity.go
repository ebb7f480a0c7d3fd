package csi

import (
	"context"

	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// AddonsIdentity is the csi-addons Identity service: it advertises the
// VolumeReplication capability (and the controller service it runs in).
type AddonsIdentity struct {
	identity.UnimplementedIdentityServer
	Name    string // DriverName unless set
	Version string
}

func (a *AddonsIdentity) GetIdentity(context.Context, *identity.GetIdentityRequest) (*identity.GetIdentityResponse, error) {
	name := a.Name
	if name == "" {
		name = DriverName
	}
	return &identity.GetIdentityResponse{Name: name, VendorVersion: versionOr(a.Version)}, nil
}

func (a *AddonsIdentity) GetCapabilities(context.Context, *identity.GetCapabilitiesRequest) (*identity.GetCapabilitiesResponse, error) {
	return &identity.GetCapabilitiesResponse{Capabilities: []*identity.Capability{
		{Type: &identity.Capability_Service_{Service: &identity.Capability_Service{Type: identity.Capability_Service_CONTROLLER_SERVICE}}},
		{Type: &identity.Capability_VolumeReplication_{VolumeReplication: &identity.Capability_VolumeReplication{
			Type: identity.Capability_VolumeReplication_VOLUME_REPLICATION}}},
	}}, nil
}

func (a *AddonsIdentity) Probe(context.Context, *identity.ProbeRequest) (*identity.ProbeResponse, error) {
	return &identity.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}
