package command

import (
	"fmt"
	"os"

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
