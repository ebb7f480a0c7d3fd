package infra

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/baton-dr/baton/internal/poll"
)

// Unanswered is what WaitReadyz makes of an API server that gives no HTTP
// answer at all (its connection refused, or a reply that is not HTTP).
type Unanswered int

const (
	// WaitUnanswered waits for it: the bring-up asks a cluster whose API
	// server may still be starting.
	WaitUnanswered Unanswered = iota
	// FailUnanswered fails at once if it has not answered yet: attaching
	// asks a bed that should be up, and if it does not answer it is down;
	// a wait would only put off saying so. Once it answered, its silence
	// (an ask the limit cut short, a restart) is waited out.
	FailUnanswered
)

// readyzPause is the pause between two looks at /readyz.
const readyzPause = 250 * time.Millisecond

// WaitReadyz waits, up to limit, until the API server at host passes its
// /readyz check. An answer of not ready is always waited out: a fresh or a
// loaded API server's etcd check fails for moments (once failing a bring-up
// that asked only once, and at a load of 50 erroring a story before its
// first step). No answer at all is waited for or not as unanswered says.
// The error names host and the last thing it said (or, if it never
// answered, the last error).
func WaitReadyz(ctx context.Context, client kubernetes.Interface, host string, limit time.Duration,
	unanswered Unanswered) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var answer, last error // the server's last answer; the last error of any kind
	for {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return nil
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			answer = err
		} else if answer == nil && unanswered == FailUnanswered {
			return fmt.Errorf("its API server at %s does not answer: %w", host, err)
		}
		last = err
		if poll.Pause(ctx, readyzPause) != nil {
			if answer == nil {
				return fmt.Errorf("its API server at %s did not answer within %s: %w", host, limit, last)
			}
			return fmt.Errorf("its API server at %s is not ready within %s: %w", host, limit, answer)
		}
	}
}
