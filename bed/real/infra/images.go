package infra

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// checkImage says which image is missing and what builds it.
func checkImage(ctx context.Context, image, builder string) error {
	if _, err := docker(ctx, "image", "inspect", "--format", "{{.Id}}", image); err != nil {
		return fmt.Errorf("the image %s is missing from the private dockerd (%s builds it)", image, builder)
	}
	return nil
}

// LoadImages puts the images into the containerd of every node of the
// cluster, as kind load docker-image does (docker save streamed into the
// node), unless the node has it already: a pod may run on any of them. It
// says how many it loaded and how many the nodes had (the bed's tags are
// content hashes).
func LoadImages(ctx context.Context, c Cluster, images ...string) (string, error) {
	list, err := ClusterNodes(c)
	if err != nil {
		return "", err
	}
	loaded, kept := 0, 0
	for _, image := range images {
		id, err := docker(ctx, "image", "inspect", "--format", "{{.Id}}", image)
		if err != nil {
			return "", fmt.Errorf("the image %s is missing from the private dockerd (%s)", image, imageBuilders)
		}
		for _, n := range list {
			if have, err := nodeutils.ImageID(n, image); err == nil && have == id {
				kept++
				continue
			}
			if err := loadImageInto(ctx, c, n, image); err != nil {
				return "", err
			}
			loaded++
		}
	}
	return fmt.Sprintf("%d loaded, %d there already", loaded, kept), nil
}

// imageBuilders say what builds the images the bed loads.
const imageBuilders = "make images builds baton's, ci/realbed/ocm-image.sh OCM's, ci/realbed/apps/images.sh the applications'"

// loadImageInto loads the image into the node.
func loadImageInto(ctx context.Context, c Cluster, n nodes.Node, image string) error {
	save := exec.CommandContext(ctx, "docker", "save", image)
	out, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	save.Stderr = &stderr
	if err := save.Start(); err != nil {
		return err
	}
	loadErr := nodeutils.LoadImageArchive(n, out)
	if loadErr != nil {
		_, _ = io.Copy(io.Discard, out) // let docker save finish
	}
	if err := save.Wait(); err != nil {
		return fmt.Errorf("%s: docker save %s: %w: %s", c.Name, image, err, strings.TrimSpace(stderr.String()))
	}
	if loadErr != nil {
		return fmt.Errorf("%s: loading %s into its node %s: %w", c.Name, image, n, loadErr)
	}
	return nil
}
