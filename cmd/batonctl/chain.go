package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	site "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
)

func newChainCommand(env environment) *cobra.Command {
	cmd := &cobra.Command{Use: "chain", Short: "walk volume chains across the sites the kubeconfig reaches"}
	cmd.AddCommand(newChainShowCommand(env))
	return cmd
}

func newChainShowCommand(env environment) *cobra.Command {
	var k kubeFlags
	var contexts []string
	cmd := &cobra.Command{
		Use:   "show HANDLE",
		Short: "draw a volume handle's chain: every hop's site, member, state, generation and last sync",
		Long: `show resolves a volume handle ("<cluster-uuid>:<volume-uuid>", the PV's) the way
the CSI driver does: it asks every site it can reach what it records of the
chain (the Volume objects of each kubeconfig context's namespace), walks from
the root to the chain's end, and draws each hop. Sites that do not answer
are listed; their members appear as Unknown, placed by their neighbours.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := chain.ParseRef(args[0])
			if err != nil {
				return err
			}
			if len(contexts) == 0 {
				if contexts, err = k.contexts(); err != nil {
					return err
				}
			}
			d := openDirectory(cmd.Context(), k, contexts)
			resolution, err := d.resolve(root)
			if err != nil {
				return err
			}
			return d.draw(cmd.OutOrStdout(), resolution, env.now())
		},
	}
	k.register(cmd, false)
	cmd.Flags().StringSliceVar(&contexts, "contexts", nil, "kubeconfig contexts to ask (comma-separated); empty asks every context")
	return cmd
}

// directory is a chain.Directory over the sites of kubeconfig contexts: each
// cluster's records are the Volume objects its StorageCluster's namespace holds.
type directory struct {
	ctx   context.Context
	sites map[chain.ClusterID]siteClient
	// silent lists the contexts that did not answer, with why.
	silent []string
}

// openDirectory asks each context which storage clusters it runs.
func openDirectory(ctx context.Context, k kubeFlags, contexts []string) *directory {
	d := &directory{ctx: ctx, sites: map[chain.ClusterID]siteClient{}}
	for _, name := range contexts {
		s, err := k.open(name)
		if err != nil {
			d.silent = append(d.silent, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		var clusters v1.StorageClusterList
		err = s.client.List(ctx, &clusters, client.InNamespace(s.namespace))
		switch {
		case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
			continue // no baton here
		case err != nil:
			d.silent = append(d.silent, fmt.Sprintf("%s (%s)", name, briefly(err)))
			continue
		}
		for _, c := range clusters.Items {
			if _, taken := d.sites[chain.ClusterID(c.Spec.ClusterID)]; !taken {
				d.sites[chain.ClusterID(c.Spec.ClusterID)] = s
			}
		}
	}
	return d
}

// Members answers what the cluster's site records of root's chain.
func (d *directory) Members(cluster chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	s, ok := d.sites[cluster]
	if !ok {
		return nil, fmt.Errorf("no context reaches cluster %s: %w", cluster, chain.ErrUnreachable)
	}
	var volumes v1.VolumeList
	err := s.client.List(d.ctx, &volumes, client.InNamespace(s.namespace), client.MatchingLabels{site.ClusterLabel: string(cluster)})
	if err != nil {
		return nil, fmt.Errorf("context %s: %w: %w", s.context, chain.ErrUnreachable, err)
	}
	var members []chain.Member
	for i := range volumes.Items {
		if string(volumes.Items[i].Spec.RootHandle) != root.String() {
			continue
		}
		v, err := site.ReadVolume(&volumes.Items[i])
		if err != nil {
			return nil, err
		}
		if !v.Deleting {
			members = append(members, v.Member)
		}
	}
	return members, nil
}

// resolve walks root's chain, asking every cluster a context runs, the
// root's, and (on a second pass) any cluster the records name.
func (d *directory) resolve(root chain.Ref) (chain.Resolution, error) {
	clusters := []chain.ClusterID{root.Cluster}
	for id := range d.sites {
		clusters = append(clusters, id)
	}
	r, err := chain.Resolve(d, clusters, root)
	if err != nil {
		return r, err
	}
	named := false
	for _, m := range r.Walk {
		if !slices.Contains(clusters, m.Ref.Cluster) {
			clusters, named = append(clusters, m.Ref.Cluster), true
		}
	}
	if named {
		return chain.Resolve(d, clusters, root)
	}
	return r, nil
}

// draw prints the walk, one hop per row.
func (d *directory) draw(out io.Writer, r chain.Resolution, now time.Time) error {
	end := r.End()
	fmt.Fprintf(out, "chain of %s: %d members, end %s (%s)\n", r.Root, len(r.Walk), end.Ref, end.State)
	if !r.Confirmed() {
		fmt.Fprintln(out, "the end is not confirmed: a site that did not answer may hold a later member")
	}
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "GEN\tSITE\tSTATE\tMEMBER\tLAST SYNC")
	for i, m := range r.Walk {
		generation := fmt.Sprint(m.Generation)
		if i > 0 {
			generation = "-> " + generation
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", generation, d.siteOf(m.Ref.Cluster), m.State, m.Ref, d.lastSync(m, now))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, c := range r.Unreachable {
		fmt.Fprintf(out, "unreachable cluster: %s\n", c)
	}
	for _, s := range d.silent {
		fmt.Fprintf(out, "unreachable context: %s\n", s)
	}
	return nil
}

func (d *directory) siteOf(cluster chain.ClusterID) string {
	if s, ok := d.sites[cluster]; ok {
		return s.context
	}
	return "?"
}

// lastSync describes the member's replication: when it last shipped, where,
// and the pairing's phase.
func (d *directory) lastSync(m chain.Member, now time.Time) string {
	s, ok := d.sites[m.Ref.Cluster]
	if !ok || m.State == chain.Unknown {
		return "?"
	}
	var r v1.Replication
	if err := s.client.Get(d.ctx, client.ObjectKey{Namespace: s.namespace, Name: string(m.Ref.Volume)}, &r); err != nil {
		if apierrors.IsNotFound(err) {
			return "not replicated"
		}
		return "? (" + briefly(err) + ")"
	}
	p, err := site.ReadPairing(&r)
	if err != nil {
		return "? (" + briefly(err) + ")"
	}
	when := "never"
	if !p.Last.At.IsZero() {
		when = age(metaTime(p.Last.At), now) + " ago"
	}
	target := string(p.Target)
	if s, ok := d.sites[p.Target]; ok {
		target = s.context
	}
	return fmt.Sprintf("%s to %s (%s)", when, target, r.Status.Phase)
}

// briefly is an error's first line, without the URL noise of a refused dial.
func briefly(err error) string {
	var dial *net.OpError
	if errors.As(err, &dial) {
		return dial.Op + " " + dial.Err.Error()
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}
