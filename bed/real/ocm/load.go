package ocm

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// LoadImages loads images from the dockerd that runs the kind cluster (the
// bed's private one: DOCKER_HOST) into each of its nodes, as `kind load
// docker-image` does through kind's Go API; an image a node has already is
// skipped (the bed's tags are content hashes). It says what it loaded.
func LoadImages(ctx context.Context, kindCluster string, images ...string) (string, error) {
	kindNodes, err := cluster.NewProvider(cluster.ProviderWithDocker()).ListInternalNodes(kindCluster)
	if err != nil {
		return "", fmt.Errorf("kind: the nodes of %s: %w", kindCluster, err)
	}
	if len(kindNodes) == 0 {
		return "", fmt.Errorf("kind: %s has no node (is the cluster up?)", kindCluster)
	}
	loaded, kept := 0, 0
	for _, image := range images {
		id, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image).Output()
		if err != nil {
			return "", fmt.Errorf("the image %s is not in the dockerd (make images and ci/realbed/ocm-image.sh build them): %w", image, err)
		}
		for _, node := range kindNodes {
			if have, err := nodeutils.ImageID(node, image); err == nil && have == strings.TrimSpace(string(id)) {
				kept++
				continue
			}
			if err := load(ctx, node, image); err != nil {
				return "", fmt.Errorf("%s: loading %s: %w", node.String(), image, err)
			}
			loaded++
		}
	}
	return fmt.Sprintf("%d loaded, %d there already", loaded, kept), nil
}

// load streams `docker save` of the image into the node's containerd.
func load(ctx context.Context, node nodes.Node, image string) error {
	save := exec.CommandContext(ctx, "docker", "save", image)
	var stderr strings.Builder
	save.Stderr = &stderr
	archive, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save: %w", err)
	}
	loadErr := nodeutils.LoadImageArchive(node, archive)
	if loadErr != nil {
		_, _ = io.Copy(io.Discard, archive) // let docker save finish
	}
	if err := save.Wait(); err != nil {
		return fmt.Errorf("docker save %s (is it built? make images, ci/realbed/ocm-image.sh): %w: %s", image, err, strings.TrimSpace(stderr.String()))
	}
	return loadErr
}

// NodeAddress is a kind node's address on a docker network: where the
// other clusters on that network reach its API server (port 6443), which
// kubeadm's serving certificate names.
func NodeAddress(ctx context.Context, node, network string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "inspect", "--format",
		"{{with index .NetworkSettings.Networks \""+network+"\"}}{{.IPAddress}}{{end}}", node).Output()
	address := strings.TrimSpace(string(out))
	if err != nil || address == "" {
		return "", fmt.Errorf("the node %s has no address on the docker network %s (%v)", node, network, err)
	}
	return address, nil
}

// HubServer is the URL the sites reach the hub's API server at.
func HubServer(address string) string { return "https://" + address + ":6443" }
