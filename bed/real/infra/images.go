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

// LoadImage puts the image into the containerd of every node of the
// cluster, as kind load docker-image does (docker save streamed into the
// node), unless the node has it already: a pod may run on any of them.
func LoadImage(ctx context.Context, c Cluster, image string) error {
	list, err := ClusterNodes(c)
	if err != nil {
		return err
	}
	id, err := docker(ctx, "image", "inspect", "--format", "{{.Id}}", image)
	if err != nil {
		return fmt.Errorf("the image %s is missing from the private dockerd (ci/realbed/baton-image.sh builds it)", image)
	}
	for _, n := range list {
		if err := loadImageInto(ctx, c, n, image, id); err != nil {
			return err
		}
	}
	return nil
}

// loadImageInto loads the image, whose ID is id, into the node unless it
// has it.
func loadImageInto(ctx context.Context, c Cluster, n nodes.Node, image, id string) error {
	if have, err := nodeutils.ImageID(n, image); err == nil && have == id {
		return nil
	}
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
