package infra

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// docker runs the docker client against the private dockerd and returns
// its standard output; its standard error is in the error.
func docker(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// useDockerd points this process, and the docker clients kind runs, at
// the private dockerd (as ci/realbed/lib.sh does for the scripts), and
// its kind provider at the bed's network.
func useDockerd(paths Paths) error {
	if os.Getenv("DOCKER_HOST") == "" {
		if err := os.Setenv("DOCKER_HOST", "unix://"+paths.DockerSocket()); err != nil {
			return err
		}
	}
	return os.Setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", KindNetwork)
}

// checkDockerd says clearly that the private dockerd does not answer.
func checkDockerd(ctx context.Context) error {
	if _, err := docker(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
		return fmt.Errorf("the private dockerd (DOCKER_HOST=%s) does not answer; ci/realbed/dockerd.sh start starts it: %w",
			os.Getenv("DOCKER_HOST"), err)
	}
	return nil
}

// ensureNetwork makes the bed's docker network on KindSubnet with a bridge
// of a fixed name, or checks the one there is; made says it made it now.
func ensureNetwork(ctx context.Context) (made bool, err error) {
	subnet, err := docker(ctx, "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", KindNetwork)
	if err == nil {
		if !strings.Contains(" "+subnet+" ", " "+KindSubnet.String()+" ") {
			return false, fmt.Errorf("the docker network %s is on %s, not the bed's %s: make realbed-down removes it", KindNetwork, subnet, KindSubnet)
		}
		return false, nil
	}
	_, err = docker(ctx, "network", "create", "--driver", "bridge", "--subnet", KindSubnet.String(),
		"--opt", "com.docker.network.bridge.enable_ip_masquerade=true",
		"--opt", "com.docker.network.bridge.name="+KindBridge, KindNetwork)
	return err == nil, err
}

// removeNetwork removes the bed's docker network once no container is on
// it; one still on it is named and the network kept.
func removeNetwork(ctx context.Context) error {
	on, err := docker(ctx, "network", "inspect", "--format", "{{range .Containers}}{{.Name}} {{end}}", KindNetwork)
	if err != nil {
		return nil // not there
	}
	if on = strings.TrimSpace(on); on != "" {
		return fmt.Errorf("the docker network %s still has containers (%s); kept", KindNetwork, on)
	}
	_, err = docker(ctx, "network", "rm", KindNetwork)
	return err
}

// forwardRule is the host firewall rule that lets the nodes reach each
// other across the host's FORWARD chain (a host dockerd sets its policy to
// DROP, and bridge-nf-call-iptables sends bridged traffic through it).
var forwardRule = []string{"FORWARD", "-i", KindBridge, "-o", KindBridge, "-j", "ACCEPT"}

func iptables(ctx context.Context, op string) error {
	out, err := exec.CommandContext(ctx, "iptables", append([]string{op}, forwardRule...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s %s: %w: %s", op, strings.Join(forwardRule, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ensureForwardRule inserts the rule unless the chain has it; inserted
// says it did now.
func ensureForwardRule(ctx context.Context) (inserted bool, err error) {
	if iptables(ctx, "-C") == nil {
		return false, nil
	}
	err = iptables(ctx, "-I")
	return err == nil, err
}

// removeForwardRule deletes every copy of the rule.
func removeForwardRule(ctx context.Context) {
	for range 16 {
		if iptables(ctx, "-D") != nil {
			return
		}
	}
}
