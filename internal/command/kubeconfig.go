package command

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LoadKubeconfig reads the kubeconfig file, else $KUBECONFIG, else the
// in-cluster service account.
func LoadKubeconfig(file string) (*rest.Config, error) {
	if file == "" {
		file = os.Getenv("KUBECONFIG")
	}
	if file == "" {
		config, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig, no $KUBECONFIG, and not in a cluster: %w", err)
		}
		return config, nil
	}
	config, err := clientcmd.BuildConfigFromFlags("", file)
	if err != nil {
		return nil, fmt.Errorf("failed to load the kubeconfig %s: %w", file, err)
	}
	return config, nil
}

// NewScheme is a scheme of client-go's kinds and those kinds adds: what a
// binary's clients and manager know.
func NewScheme(kinds ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, kinds...) {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("failed to build the scheme: %w", err)
		}
	}
	return scheme, nil
}
