package ocm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/internal/poll"
	"github.com/baton-dr/baton/internal/steplog"
)

// Site is a cluster to join to the hub.
type Site struct {
	Cluster
	// ManagedCluster is its name on the hub: the ManagedCluster, its
	// namespace there, a StorageSiteDeployment's site ("site-b").
	ManagedCluster string
	// Namespace is baton's namespace on the site, where the hub's works
	// apply baton's objects (baton-system).
	Namespace string
}

// bootstrapTokenSeconds bounds the bootstrap token: it is used once, for
// the CSR; the agent's own certificate takes over.
const bootstrapTokenSeconds = 24 * 3600

// Join installs the klusterlet on the site and accepts it on the hub: OCM's
// klusterlet CRDs and roles, a bootstrap kubeconfig that reaches the hub's
// API server at hubServer (its address on the bed's network), the
// registration agent; then the hub approves its CSR and accepts it
// (Accept); then the work agent and baton's view agent, which need the hub
// kubeconfig the approved CSR gave; and it returns once the ManagedCluster
// is Joined and Available. Re-running it converges.
func Join(ctx context.Context, p *steplog.Log, moduleDir string, hub Cluster, hubServer string, site Site, images Images) error {
	if err := images.check(); err != nil {
		return err
	}
	if site.ManagedCluster == "" || site.Namespace == "" {
		return errors.New("a site needs its ManagedCluster name and baton's namespace on it")
	}
	s, err := site.client()
	if err != nil {
		return err
	}
	h, err := hub.client()
	if err != nil {
		return err
	}
	name := site.ManagedCluster
	roles, registration, work, err := klusterletObjects(moduleDir, images.OCM, name)
	if err != nil {
		return err
	}
	steps := []struct {
		name string
		f    func() (string, error)
	}{
		{"klusterlet's CRDs and roles", func() (string, error) {
			crds, err := klusterletCRDs(moduleDir)
			if err != nil {
				return "", err
			}
			if err := applyCRDs(ctx, s, crds); err != nil {
				return "", err
			}
			execution, err := workExecutionObjects(site.Namespace)
			if err != nil {
				return "", err
			}
			objects := append(append(namespaces(AgentNamespace, AddonNamespace, site.Namespace), roles...), execution...)
			return fmt.Sprintf("%d CRDs, %d roles and accounts", len(crds), len(roles)+len(execution)), apply(ctx, s, objects)
		}},
		{"bootstrap kubeconfig", func() (string, error) {
			return "the hub at " + hubServer + " as " + OperatorNamespace + "/" + BootstrapServiceAccount,
				writeBootstrap(ctx, hub, s, hubServer)
		}},
		{"registration agent", func() (string, error) {
			return "Available", applyAvailable(ctx, s, []*unstructured.Unstructured{registration}, AgentNamespace, registration.GetName())
		}},
		{"accepted on the hub", func() (string, error) { return Accept(ctx, hub, name) }},
		{"hub kubeconfig", func() (string, error) {
			return "in " + AgentNamespace + "/" + HubKubeconfigSecret, waitHubKubeconfig(ctx, s)
		}},
		{"work agent", func() (string, error) {
			return "Available", applyAvailable(ctx, s, []*unstructured.Unstructured{work}, AgentNamespace, work.GetName())
		}},
		{"view agent", func() (string, error) {
			onHub, err := viewAgentHubObjects(name)
			if err != nil {
				return "", err
			}
			onSite, err := viewAgentSiteObjects(images.Baton, name, site.Namespace)
			if err != nil {
				return "", err
			}
			if err := apply(ctx, h, onHub); err != nil {
				return "", err
			}
			return "Available", applyAvailable(ctx, s, onSite, AgentNamespace, ViewAgent)
		}},
		{"ManagedCluster available", func() (string, error) { return waitJoined(ctx, h, name) }},
	}
	for _, step := range steps {
		if err := p.Step(site.Name+" as "+name+": "+step.name, step.f); err != nil {
			return err
		}
	}
	return nil
}

// writeBootstrap asks the hub for a token of the bootstrap ServiceAccount and
// writes the bootstrap kubeconfig the registration agent reads. The token is
// never printed.
func writeBootstrap(ctx context.Context, hub Cluster, site client.Client, server string) error {
	clientset, err := kubernetes.NewForConfig(hub.Config)
	if err != nil {
		return err
	}
	seconds := int64(bootstrapTokenSeconds)
	token, err := clientset.CoreV1().ServiceAccounts(OperatorNamespace).CreateToken(ctx, BootstrapServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("failed to get a token of the bootstrap ServiceAccount (Install makes it): %w", err)
	}
	ca := hub.Config.CAData
	if len(ca) == 0 && hub.Config.CAFile != "" {
		if ca, err = os.ReadFile(hub.Config.CAFile); err != nil {
			return fmt.Errorf("the hub's CA: %w", err)
		}
	}
	if len(ca) == 0 {
		return errors.New("the hub's config carries no CA: the sites could not verify its API server")
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["hub"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	config.AuthInfos["bootstrap"] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	config.Contexts["bootstrap"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "bootstrap"}
	config.CurrentContext = "bootstrap"
	data, err := clientcmd.Write(*config)
	if err != nil {
		return err
	}
	secret, err := asObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: AgentNamespace, Name: BootstrapSecret},
		Data: map[string][]byte{"kubeconfig": data}})
	if err != nil {
		return err
	}
	return apply(ctx, site, secret)
}

// hubKubeconfigLimit bounds the wait for the registration agent's
// certificate once the hub approved its CSR.
const hubKubeconfigLimit = 2 * time.Minute

// waitHubKubeconfig waits until the registration agent has written the
// site's own hub kubeconfig and certificate.
func waitHubKubeconfig(ctx context.Context, site client.Client) error {
	return poll.Until(ctx, hubKubeconfigLimit, func() (bool, string) {
		var secret corev1.Secret
		if err := site.Get(ctx, client.ObjectKey{Namespace: AgentNamespace, Name: HubKubeconfigSecret}, &secret); err != nil {
			return false, err.Error()
		}
		for _, key := range []string{"kubeconfig", "tls.crt", "tls.key"} {
			if len(secret.Data[key]) == 0 {
				return false, "the secret has no " + key + " yet"
			}
		}
		return true, ""
	})
}

// HubServer is the URL the sites reach the hub's API server at.
func HubServer(address string) string { return "https://" + address + ":6443" }
