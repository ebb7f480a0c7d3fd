package ocm

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-dr/baton/internal/steplog"
)

// Images are what the hub and the sites run: OCM's (ci/realbed/ocm-image.sh)
// and baton's (make images). Both must be loaded into the clusters' nodes
// (bed/real/infra's LoadImages) before Install and Join.
type Images struct {
	OCM   string
	Baton string
}

func (i Images) check() error {
	if i.OCM == "" || i.Baton == "" {
		return errors.New("both images are needed: OCM's (ci/realbed/ocm-image.sh prints it) and baton's (make images)")
	}
	return nil
}

// Install makes hub an OCM hub running baton-hub: OCM's hub CRDs, the
// registration controller with OCM's own roles, the bootstrap identity the
// sites register with, then baton-hub's CRDs (its requests and
// ManagedClusterView), roles (deploy/hub) and Deployment. It returns once
// both controllers are Available. Re-running it converges.
func Install(ctx context.Context, p *steplog.Log, moduleDir string, hub Cluster, images Images) error {
	if err := images.check(); err != nil {
		return err
	}
	c, err := hub.client()
	if err != nil {
		return err
	}
	if err := p.Step(hub.Name+": OCM's hub CRDs", func() (string, error) {
		crds, err := hubCRDs(moduleDir)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d CRDs of OCM %s Established", len(crds), Version), applyCRDs(ctx, c, crds)
	}); err != nil {
		return err
	}
	if err := p.Step(hub.Name+": registration controller", func() (string, error) {
		objects, err := hubObjects(moduleDir, images.OCM)
		if err != nil {
			return "", err
		}
		return "cluster-manager-registration-controller Available (" + images.OCM + ")",
			applyAvailable(ctx, c, append(namespaces(OperatorNamespace), objects...), HubNamespace, clusterManagerName+"-registration-controller")
	}); err != nil {
		return err
	}
	return p.Step(hub.Name+": baton-hub", func() (string, error) {
		crds, err := batonHubCRDs()
		if err != nil {
			return "", err
		}
		if err := applyCRDs(ctx, c, crds); err != nil {
			return "", err
		}
		objects, err := batonHubObjects(images.Baton)
		if err != nil {
			return "", err
		}
		return "Available (" + images.Baton + ")", applyAvailable(ctx, c, objects, HubControllerNamespace, "baton-hub")
	})
}
