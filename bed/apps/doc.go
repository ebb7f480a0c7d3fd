// Package apps is the application logic every bed shares: it deploys an
// application's volumes through its site's CSI controller, starts its pod,
// steps its workload model, protects and moves it in Ramen's order
// (bed/ramen), and judges what each move lost (bed.MoveLosses). One
// implementation of the rules -- a fail-over to the site the application runs
// on is refused, the instance left writing on a cut-off site is the diverged
// tail, a planned move loses nothing -- whichever bed runs it.
//
// What differs between beds is behind Platform, which bed/sim (over the
// simulated kernel), bed/local (over real processes) and bed/real (over kind
// clusters) implement: how a volume is made and a pod started, what time is,
// where events and violations go. Two capabilities a platform may add: Runner
// runs some applications as themselves (bed/real's WordPress and Gitea,
// written through their HTTP APIs) instead of their workload models, and
// Claims holds volumes through claims that a move restores on the target
// site, as Ramen's VolumeReplicationGroup does. The bed keeps its own Ramen
// driver (its rounds are its own) and hands it to New.
package apps
