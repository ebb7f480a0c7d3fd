package infra

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// inotifyLimits are the least the host's inotify limits must allow: each
// kind node's kubelet, kube-proxy and containerd take inotify instances of
// the host's one root user, and a dockerd shared with other users' kind
// clusters runs out of the default 128 (kube-proxy then fails with "too
// many open files" and no cluster gets Ready). The figures are kind's
// documented ones (known issues: pod errors due to too many open files).
var inotifyLimits = []struct {
	file  string
	least int
}{
	{"/proc/sys/fs/inotify/max_user_instances", 512},
	{"/proc/sys/fs/inotify/max_user_watches", 524288},
}

// raiseInotifyLimits raises each limit below its least to it, and says
// what it changed.
func raiseInotifyLimits() (string, error) {
	var changed []string
	for _, l := range inotifyLimits {
		data, err := os.ReadFile(l.file)
		if err != nil {
			return "", err
		}
		now, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return "", fmt.Errorf("%s: %w", l.file, err)
		}
		if now >= l.least {
			continue
		}
		if err := os.WriteFile(l.file, []byte(strconv.Itoa(l.least)), 0o644); err != nil {
			return "", fmt.Errorf("raising %s from %d to %d: %w", l.file, now, l.least, err)
		}
		changed = append(changed, fmt.Sprintf("%s %d -> %d", l.file[len("/proc/sys/"):], now, l.least))
	}
	if len(changed) == 0 {
		return "enough", nil
	}
	return "raised " + strings.Join(changed, ", "), nil
}
