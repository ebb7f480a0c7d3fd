package chart

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// getter hands Helm a rest.Config, with discovery cached in memory only: an
// on-disk cache (kubectl's, keyed by host and port) could answer for another
// cluster that had the same address, or for this one before its CRDs.
type getter struct {
	config    *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
}

func newGetter(config *rest.Config, namespace string) *getter {
	return &getter{config: rest.CopyConfig(config), namespace: namespace}
}

func (g *getter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

func (g *getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if g.discovery == nil {
		d, err := discovery.NewDiscoveryClientForConfig(g.config)
		if err != nil {
			return nil, err
		}
		g.discovery = memory.NewMemCacheClient(d)
	}
	return g.discovery, nil
}

func (g *getter) ToRESTMapper() (meta.RESTMapper, error) {
	d, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	return restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(d), d, nil), nil
}

// ToRawKubeConfigLoader answers the namespace Helm's client defaults to.
func (g *getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(),
		&clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}
